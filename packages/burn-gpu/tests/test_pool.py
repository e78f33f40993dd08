"""The pool template (`burn_gpu.pool_program`) run on PoCL in the OpenCL dialect: forwards
against numpy float64, backwards by their adjoint identity <f(x), g> = <x, f^T(g)> (average
pools are linear) and, for max, against the gradient routed to the recorded indices."""

from __future__ import annotations

import numpy as np
import pytest
from burn_gpu import geo_args, pool_program

N, C, H, W = 2, 3, 7, 6


def _windows(x, kh, kw, sh, sw, ph, pw):
    """numpy float64 windows [N, C, OH, OW, kh, kw] of x padded with NaN-free sentinels."""
    oh, ow = (H + 2 * ph - kh) // sh + 1, (W + 2 * pw - kw) // sw + 1
    xp = np.full((N, C, H + 2 * ph, W + 2 * pw), np.nan)
    xp[:, :, ph : ph + H, pw : pw + W] = x
    win = np.empty((N, C, oh, ow, kh, kw))
    for i in range(oh):
        for j in range(ow):
            win[:, :, i, j] = xp[:, :, i * sh : i * sh + kh, j * sw : j * sw + kw]
    return win, oh, ow


@pytest.fixture(scope="module")
def run(cl_queue, cl_build):
    cl = pytest.importorskip("pyopencl")
    ctx, queue, device = cl_queue
    prg = cl_build(pool_program("float64", "int32", "opencl"))
    mf = cl.mem_flags

    def launch(name, outs, ins, total, **geo):
        obufs = [cl.Buffer(ctx, mf.READ_WRITE, max(o.nbytes, 1)) for o in outs]
        ibufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a) for a in ins]
        k = cl.Kernel(prg, name)
        k.set_args(*obufs, *ibufs, *(np.int32(v) for v in geo_args(**geo)))
        cl.enqueue_nd_range_kernel(queue, k, (total,), None)
        for o, b in zip(outs, obufs):
            cl.enqueue_copy(queue, o, b)
        queue.finish()
        return outs

    if "cl_khr_fp64" not in device.extensions:
        pytest.skip("no cl_khr_fp64 on this device")
    return launch


@pytest.mark.parametrize("cip", [0, 1])
def test_avg_pool_and_its_adjoint(run, cip):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((N, C, H, W))
    kh, kw, sh, sw, ph, pw = 3, 2, 2, 1, 1, 1
    win, oh, ow = _windows(x, kh, kw, sh, sw, ph, pw)
    cnt = kh * kw if cip else (~np.isnan(win)).sum((4, 5))
    want = np.nansum(win, (4, 5)) / cnt
    geo = dict(N=N, C=C, H=H, W=W, OH=oh, OW=ow, KH=kh, KW=kw, sh=sh, sw=sw, ph=ph, pw=pw,
               dh=1, dw=1, flag=cip)  # fmt: skip
    (got,) = run("avg_pool", [np.empty((N, C, oh, ow))], [x], want.size, **geo)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    g = rng.standard_normal((N, C, oh, ow))
    (gx,) = run("avg_pool_backward", [np.empty(x.shape)], [g], x.size, **geo)
    np.testing.assert_allclose((got * g).sum(), (x * gx).sum(), rtol=1e-12)


def test_max_pool_nan_padding_and_its_gradient(run):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((N, C, H, W))
    x[0, 0, 2, 2] = np.nan  # a NaN wins its windows
    kh, kw, sh, sw, ph, pw = 2, 3, 2, 2, 1, 1
    win, oh, ow = _windows(x, kh, kw, sh, sw, ph, pw)
    geo = dict(N=N, C=C, H=H, W=W, OH=oh, OW=ow, KH=kh, KW=kw, sh=sh, sw=sw, ph=ph, pw=pw,
               dh=1, dw=1)  # fmt: skip
    out, idx = run(
        "max_pool", [np.empty((N, C, oh, ow)), np.empty((N, C, oh, ow), np.int32)], [x],
        N * C * oh * ow, **geo,
    )  # fmt: skip
    flat = win.reshape(N, C, oh, ow, -1)
    has_x_nan = np.array([[[[np.isnan(x.reshape(N, C, -1)[n, c, idx[n, c, i, j]])
                             for j in range(ow)] for i in range(oh)] for c in range(C)]
                          for n in range(N)])  # fmt: skip
    want = np.nanmax(flat, -1)
    np.testing.assert_array_equal(np.isnan(out), has_x_nan)
    np.testing.assert_allclose(out[~has_x_nan], want[~has_x_nan], rtol=0)
    assert has_x_nan.any()  # the NaN won at least one window
    # the value at the recorded flat index is the max
    vals = np.take_along_axis(x.reshape(N, C, -1), idx.reshape(N, C, -1), 2).reshape(out.shape)
    np.testing.assert_array_equal(np.isnan(vals), np.isnan(out))
    np.testing.assert_allclose(vals[~np.isnan(out)], out[~np.isnan(out)], rtol=0)
    g = rng.standard_normal(out.shape)
    (gx,) = run("max_pool_backward", [np.empty(x.shape)], [g, idx], x.size, **geo)
    want_gx = np.zeros((N, C, H * W))
    for n in range(N):
        for c in range(C):
            np.add.at(want_gx[n, c], idx[n, c].ravel(), g[n, c].ravel())
    np.testing.assert_allclose(gx.reshape(N, C, -1), want_gx, rtol=1e-12, atol=1e-12)


def test_adaptive_avg_pool_and_its_adjoint(run):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((N, C, H, W))
    oh, ow = 3, 4
    want = np.empty((N, C, oh, ow))
    for i in range(oh):
        for j in range(ow):
            y0, y1 = (i * H) // oh, -(-(i + 1) * H // oh)
            x0, x1 = (j * W) // ow, -(-(j + 1) * W // ow)
            want[:, :, i, j] = x[:, :, y0:y1, x0:x1].mean((2, 3))
    geo = dict(N=N, C=C, H=H, W=W, OH=oh, OW=ow)
    (got,) = run("adaptive_avg", [np.empty((N, C, oh, ow))], [x], want.size, **geo)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    g = rng.standard_normal(got.shape)
    (gx,) = run("adaptive_avg_backward", [np.empty(x.shape)], [g], x.size, **geo)
    np.testing.assert_allclose((got * g).sum(), (x * gx).sum(), rtol=1e-12)
