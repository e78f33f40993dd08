"""The conv template (`burn_gpu.conv_program`) run on PoCL in the OpenCL dialect against numpy
float64: im2col (both forms) against windows taken in numpy, col2im by its adjoint identity
<im2col(x), c> = <x, col2im(c)>, interpolation (nearest, bilinear) against numpy; 32-bit and
64-bit flat indices."""

from __future__ import annotations

import numpy as np
import pytest
from burn_gpu import conv_program, geo_args

N, C, H, W = 2, 3, 6, 7


@pytest.fixture(scope="module")
def run(cl_queue, cl_build):
    cl = pytest.importorskip("pyopencl")
    ctx, queue, device = cl_queue
    if "cl_khr_fp64" not in device.extensions:
        pytest.skip("no cl_khr_fp64 on this device")
    mf = cl.mem_flags
    progs = {}

    def launch(wide, name, out, src, items, **geo):
        if wide not in progs:
            progs[wide] = cl_build(conv_program("float64", "opencl", wide))
        ob = cl.Buffer(ctx, mf.READ_WRITE, out.nbytes)
        ib = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=src)
        k = cl.Kernel(progs[wide], name)
        k.set_args(ob, ib, *(np.int32(v) for v in geo_args(**geo)))
        cl.enqueue_nd_range_kernel(queue, k, (items,), None)
        cl.enqueue_copy(queue, out, ob)
        queue.finish()
        return out

    return launch


def _im2col(x, kh, kw, s, p, d):
    oh = (H + 2 * p - d * (kh - 1) - 1) // s + 1
    ow = (W + 2 * p - d * (kw - 1) - 1) // s + 1
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    cols = np.empty((N, C, kh, kw, oh, ow))
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, i * d : i * d + s * oh : s, j * d : j * d + s * ow : s]
    return cols.reshape(N, C * kh * kw, oh * ow), oh, ow


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("s,p,d", [(1, 1, 1), (2, 1, 2)])
def test_im2col_and_col2im_adjoint(run, wide, s, p, d):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((N, C, H, W))
    kh, kw = 3, 2
    want, oh, ow = _im2col(x, kh, kw, s, p, d)
    geo = dict(N=N, C=C, H=H, W=W, OH=oh, OW=ow, KH=kh, KW=kw, sh=s, sw=s, ph=p, pw=p, dh=d, dw=d)
    got = run(wide, "im2col", np.empty(want.shape), x, 50, **geo)  # fewer items: the loop
    np.testing.assert_array_equal(got, want)
    got = run(wide, "im2col_rows", np.empty(want.shape), x, N * C * kh * kw * oh, **geo)
    np.testing.assert_array_equal(got, want)
    c = rng.standard_normal(want.shape)
    t_geo = dict(geo, H=oh, W=ow, OH=H, OW=W)  # the transposed conv's view of the same windows
    back = run(wide, "col2im", np.empty(x.shape), c, x.size, **t_geo)
    np.testing.assert_allclose((want * c).sum(), (x * back).sum(), rtol=1e-12)


def test_interpolate_nearest_and_bilinear(run):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((N, C, H, W))
    oh, ow = 4, 11
    geo = dict(N=N, C=C, H=H, W=W, OH=oh, OW=ow)
    got = run(False, "interpolate", np.empty((N, C, oh, ow)), x, 64, flag=0, **geo)
    ys, xs = (np.arange(oh) * H) // oh, (np.arange(ow) * W) // ow
    np.testing.assert_array_equal(got, x[:, :, ys][:, :, :, xs])
    got = run(False, "interpolate", np.empty((N, C, oh, ow)), x, 64, flag=1, **geo)
    sy, sx = np.arange(oh) * (H - 1) / (oh - 1), np.arange(ow) * (W - 1) / (ow - 1)
    rows = np.stack([np.interp(sx, np.arange(W), r) for r in x.reshape(-1, W)]).reshape(N, C, H, ow)
    want = np.stack([np.interp(sy, np.arange(H), col) for col in rows.transpose(0, 1, 3, 2).reshape(-1, H)])
    want = want.reshape(N, C, ow, oh).transpose(0, 1, 3, 2)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
