"""The 3-D template (`burn_gpu.vol_program`) run on PoCL in the OpenCL dialect against the
float64 loops of `burn_backend_tests.reference.volume`: conv3d as vol2col + a numpy GEMM,
conv_transpose3d as a numpy GEMM + col2vol, and the three pools (max with its indices). The CUDA
rendering runs the same ops through Cuda's conformance suite on the g++ stand-in
(packages/burn-cuda/tests/test_conformance_cpu.py)."""

from __future__ import annotations

import numpy as np
import pytest
from burn_backend_tests.reference import volume as ref
from burn_gpu import DIALECTS, vol_args, vol_program

RNG = np.random.default_rng(38)


def _out(size, k, s, p, d):
    return [(size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(3)]


def _geo(shape, out, k, s, p, d, **kw):
    n, c, dd, h, w = shape
    return dict(N=n, C=c, D=dd, H=h, W=w, OD=out[0], OH=out[1], OW=out[2], KD=k[0], KH=k[1],
                KW=k[2], sd=s[0], sh=s[1], sw=s[2], pd=p[0], ph=p[1], pw=p[2], dd=d[0], dh=d[1],
                dw=d[2], **kw)  # fmt: skip


@pytest.mark.parametrize("dialect", DIALECTS)
def test_renders_every_kernel(dialect):
    src = vol_program("float32", "int64", dialect, wide=True)
    for name in ("vol2col", "col2vol", "max_pool3d", "avg_pool3d", "adaptive_avg3d"):
        assert f"{name}(" in src


@pytest.fixture(scope="module")
def run(cl_fp64, cl_build):
    cl = pytest.importorskip("pyopencl")
    ctx, queue, _ = cl_fp64
    prg = cl_build(vol_program("float64", "int32", "opencl"))
    mf = cl.mem_flags

    def launch(name, outs, ins, total, **geo):
        obufs = [cl.Buffer(ctx, mf.READ_WRITE, max(o.nbytes, 1)) for o in outs]
        ibufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a) for a in ins]
        k = cl.Kernel(prg, name)
        k.set_args(*obufs, *ibufs, *(np.int32(v) for v in vol_args(**geo)))
        cl.enqueue_nd_range_kernel(queue, k, (total,), None)
        for o, b in zip(outs, obufs):
            cl.enqueue_copy(queue, o, b)
        queue.finish()
        return outs

    return launch


def test_conv3d_through_vol2col(run):
    x, w = RNG.standard_normal((2, 4, 5, 6, 5)), RNG.standard_normal((6, 2, 3, 2, 3))
    k, s, p, d, g = (3, 2, 3), (2, 1, 1), (1, 0, 1), (1, 2, 1), 2
    out = _out(x.shape[2:], k, s, p, d)
    cols = np.empty((2, 4 * 18, int(np.prod(out))))
    run("vol2col", [cols], [x], cols.size, **_geo(x.shape, out, k, s, p, d))
    y = np.matmul(w.reshape(1, g, 3, 2 * 18), cols.reshape(2, g, 2 * 18, -1)).reshape(2, 6, *out)
    np.testing.assert_allclose(y, ref.conv3d(x, w, None, s, p, d, g), rtol=1e-12, atol=1e-12)


def test_conv_transpose3d_through_col2vol(run):
    x, w = RNG.standard_normal((2, 4, 3, 2, 3)), RNG.standard_normal((4, 3, 2, 3, 2))
    k, s, p, po, d, g = (2, 3, 2), (2, 1, 2), (1, 1, 0), (1, 0, 1), (1, 1, 2), 2
    size = x.shape[2:]
    out = [(size[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + po[i] + 1 for i in range(3)]
    wg = w.reshape(1, g, 2, 3 * 12).transpose(0, 1, 3, 2)
    cols = np.ascontiguousarray(np.matmul(wg, x.reshape(2, g, 2, -1)))
    y = np.empty((2, 6, *out))
    run("col2vol", [y], [cols], y.size, **_geo((2, 6, *size), out, k, s, p, d))
    np.testing.assert_allclose(y, ref.conv_transpose3d(x, w, None, s, p, po, d, g), rtol=1e-12,
                               atol=1e-12)


def test_pools3d(run):
    x = RNG.standard_normal((2, 3, 5, 4, 6))
    k, s, p, d = (3, 2, 3), (2, 1, 2), (1, 1, 1), (1, 2, 1)
    out = _out(x.shape[2:], k, s, p, d)
    y, idx = np.empty((2, 3, *out)), np.empty((2, 3, *out), np.int32)
    run("max_pool3d", [y, idx], [x], y.size, **_geo(x.shape, out, k, s, p, d))
    want, want_idx = ref.max_pool3d_with_indices(x, k, s, p, d)
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(idx, want_idx)
    one = (1, 1, 1)
    for cip in (0, 1):
        out = _out(x.shape[2:], k, s, p, one)
        y = np.empty((2, 3, *out))
        run("avg_pool3d", [y], [x], y.size, **_geo(x.shape, out, k, s, p, one, flag=cip))
        np.testing.assert_allclose(y, ref.avg_pool3d(x, k, s, p, bool(cip)), rtol=1e-12)
    y = np.empty((2, 3, 3, 3, 4))
    run("adaptive_avg3d", [y], [x], y.size, **_geo(x.shape, (3, 3, 4), one, one, (0, 0, 0), one))
    np.testing.assert_allclose(y, ref.adaptive_avg_pool3d(x, (3, 3, 4)), rtol=1e-12)
