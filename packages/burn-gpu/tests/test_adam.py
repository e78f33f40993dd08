"""The Adam template (`burn_gpu.adam_program`) run on PoCL in the OpenCL dialect against numpy
float64 (burn-tensor's default decomposition written out), first step and a later one, with a
launch of fewer items than elements (the grid-stride loop covers the rest)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from burn_gpu import adam_program


def _adam(p, g, m1, m2, lr, b1, b2, eps, t):
    m1 = b1 * m1 + (1 - b1) * g
    m2 = b2 * m2 + (1 - b2) * g * g
    bc2 = np.sqrt(1 - b2**t)
    return p - (m1 * (bc2 / (1 - b1**t)) / (np.sqrt(m2) + eps * bc2)) * lr, m1, m2


@pytest.fixture(scope="module")
def run(cl_fp64, cl_build):
    cl = pytest.importorskip("pyopencl")
    ctx, queue, _ = cl_fp64
    prg = cl_build(adam_program("float64", "opencl"))
    mf = cl.mem_flags

    def launch(p, g, m1, m2, hp, items):
        lr, b1, b2, eps, t = hp
        bc2 = math.sqrt(1 - b2**t)
        first = m1 is None
        ins = [p, g, p if first else m1, p if first else m2]
        bufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a) for a in ins]
        outs = [np.empty_like(p) for _ in range(3)]
        obufs = [cl.Buffer(ctx, mf.READ_WRITE, p.nbytes) for _ in range(3)]
        scalars = (b1, 1 - b1, b2, 1 - b2, bc2 / (1 - b1**t), eps * bc2, lr)
        k = cl.Kernel(prg, "adam_update")
        k.set_args(*bufs, *obufs, np.int64(p.size), np.int32(first), *map(np.float64, scalars))
        cl.enqueue_nd_range_kernel(queue, k, (items,), None)
        for o, b in zip(outs, obufs):
            cl.enqueue_copy(queue, o, b)
        queue.finish()
        return outs

    return launch


@pytest.mark.parametrize("first", [True, False])
@pytest.mark.parametrize("items", [1000, 64])
def test_adam_update_matches_the_decomposition(run, first, items):
    rng = np.random.default_rng(7)
    p, g = rng.standard_normal(1000), rng.standard_normal(1000)
    m1 = None if first else rng.standard_normal(1000)
    m2 = None if first else rng.uniform(0, 1, 1000)
    hp = (1e-2, 0.9, 0.999, 1e-8, 1 if first else 5)
    z = np.zeros(1000)
    want = _adam(p, g, z if first else m1, z if first else m2, *hp)
    for got, w in zip(run(p, g, m1, m2, hp, items), want):
        np.testing.assert_allclose(got, w, rtol=1e-13, atol=1e-15)


def test_adam_scalars_from_reads_factor_denom_lr_from_device_memory(cl_fp64, cl_build):
    # the SCALARS_FROM form (a captured step's update): factor, denom and lr from a buffer at
    # the kernel's last argument, the bits of the form taking them as arguments
    cl = pytest.importorskip("pyopencl")
    ctx, queue, _ = cl_fp64
    src = adam_program("float64", "opencl", scalars_from=True)
    assert "adam_update_at(" in src and "const T factor = sc[0]" in src
    prg = cl_build(adam_program("float64", "opencl") + src.split("typedef long L;", 1)[-1])
    rng = np.random.default_rng(8)
    p, g, m1 = rng.standard_normal((3, 500))
    m2 = rng.uniform(0, 1, 500)
    b1, b2, eps, t, lr = 0.9, 0.999, 1e-8, 4, 3e-3
    bc2 = math.sqrt(1 - b2**t)
    sc = np.array([bc2 / (1 - b1**t), eps * bc2, lr])
    mf = cl.mem_flags
    bufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a) for a in (p, g, m1, m2)]
    scbuf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=sc)
    got = []
    for name in ("adam_update", "adam_update_at"):
        obufs = [cl.Buffer(ctx, mf.READ_WRITE, p.nbytes) for _ in range(3)]
        tail = [*map(np.float64, sc)] if name == "adam_update" else [scbuf]
        k = cl.Kernel(prg, name)
        k.set_args(*bufs, *obufs, np.int64(p.size), np.int32(0),
                   *map(np.float64, (b1, 1 - b1, b2, 1 - b2)), *tail)  # fmt: skip
        cl.enqueue_nd_range_kernel(queue, k, (500,), None)
        outs = [np.empty_like(p) for _ in range(3)]
        for o, b in zip(outs, obufs):
            cl.enqueue_copy(queue, o, b)
        queue.finish()
        got.append(outs)
    for a, b in zip(*got):
        assert a.tobytes() == b.tobytes()
