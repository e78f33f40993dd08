"""`fill_program` (`fill`, `bias_add`) run on PoCL in the OpenCL dialect against numpy float64,
32- and 64-bit divisions, with fewer work-items than elements (the grid-stride loop covers the
rest) and the linear (inner = 1) and conv (inner > 1) layouts of the bias."""

from __future__ import annotations

import numpy as np
import pytest
from burn_gpu import fill_program


@pytest.fixture(scope="module", params=[False, True], ids=["int", "wide"])
def prog(cl_fp64, cl_build, request):
    cl = pytest.importorskip("pyopencl")
    ctx, queue, _ = cl_fp64
    return cl, ctx, queue, cl_build(fill_program("float64", "opencl", request.param))


@pytest.mark.parametrize("items", [1000, 64])
def test_fill_sets_every_element(prog, items):
    cl, ctx, queue, prg = prog
    out = np.zeros(1000)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, out.nbytes)
    k = cl.Kernel(prg, "fill")
    k.set_args(buf, np.int64(out.size), np.float64(-2.5))
    cl.enqueue_nd_range_kernel(queue, k, (items,), None)
    cl.enqueue_copy(queue, out, buf)
    queue.finish()
    np.testing.assert_array_equal(out, np.full(1000, -2.5))


@pytest.mark.parametrize(("shape", "items"), [((37, 5, 1), 2048), ((3, 7, 11), 64)])
def test_bias_add_adds_the_channel_bias_in_place(prog, shape, items):
    cl, ctx, queue, prg = prog
    rng = np.random.default_rng(3)
    x, bias = rng.standard_normal(shape), rng.standard_normal(shape[1])
    mf = cl.mem_flags
    out = np.empty_like(x)
    xb = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=x)
    bb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=bias)
    k = cl.Kernel(prg, "bias_add")
    k.set_args(xb, bb, np.int64(x.size), np.int64(shape[1]), np.int64(shape[2]))
    cl.enqueue_nd_range_kernel(queue, k, (items,), None)
    cl.enqueue_copy(queue, out, xb)
    queue.finish()
    np.testing.assert_allclose(out, x + bias[None, :, None], rtol=0, atol=0)
