"""conv2d forward, chunked native path: parallel C im2col of a batch chunk, one BLAS GEMM per
chunk with the budget's BLAS threads, a parallel C transpose back to NCHW with the bias added.

The fallback of `_native_conv` when numpy's BLAS exposes no cblas GEMM to call from C, and
`BURN_NDARRAY_NATIVE_CONV=chunked` (to compare against it). Measured on 16 cores it reached
0.17 TFLOP/s on 64->64 [32, 64, 32, 32] (torch 0.95): the columns (9x the input) stream
through memory, the GEMM's NHWC output takes another pass to become NCHW, and OpenBLAS's own
threads spin for ~0.1 s after every call.
"""

from __future__ import annotations

import numpy as np

from . import _blas
from . import _native_ops as _ops
from ._native_ops import F32, F64, _nt

CHUNK_BYTES = 16 << 20  # im2col columns materialised at once (as _im2col.CHUNK_BYTES)
GRAIN = 1 << 14


def conv2d(lib, threads, x, weight, bias, stride, padding, dilation, out_hw) -> np.ndarray:
    """Shapes: x [n, c, h, w], weight [co, c, kh, kw], bias [co] | None -> [n, co, oh, ow];
    x, weight and bias of one float dtype (float32 or float64), groups 1."""
    im2col = {F32: lib.im2col_f32, F64: lib.im2col_f64}
    to_nhwc = {F32: lib.to_nhwc_pad_f32, F64: lib.to_nhwc_pad_f64}
    to_nchw = {F32: lib.to_nchw_f32, F64: lib.to_nchw_f64}
    dt = x.dtype
    n, c, h, w = x.shape
    co, _, kh, kw = weight.shape
    oh, ow = out_hw
    p, kk = oh * ow, c * kh * kw
    x = np.ascontiguousarray(x)
    # [K, c_out], K ordered (i, j, c) as the columns
    wt = np.ascontiguousarray(weight.transpose(2, 3, 1, 0)).reshape(kk, co)
    b = None if bias is None else np.ascontiguousarray(bias)
    chunk = max(1, min(n, CHUNK_BYTES // max(1, p * kk * dt.itemsize)))
    hp, wp = h + 2 * padding[0], w + 2 * padding[1]
    xpad = np.empty((chunk, hp, wp, c), dt)
    cols = np.empty((chunk * p, kk), dt)
    tmp = np.empty((chunk * p, co), dt)
    out = np.empty((n, co, oh, ow), dt)
    img_in, img_out = c * h * w * dt.itemsize, co * p * dt.itemsize
    nt = _nt(threads, chunk * p * kk, GRAIN)
    # conv GEMMs are thin (K = 27 for an RGB input): a thread per 2^22 multiply-adds
    _blas.set_threads(_blas.gemm_threads(4 * chunk * p * kk * co, threads))
    bptr = None if b is None else _ops._ptr(b)
    xp, op = _ops._ptr(x), _ops._ptr(out)
    for s in range(0, n, chunk):
        e = min(n, s + chunk)
        rows = (e - s) * p
        to_nhwc[dt](xp + s * img_in, _ops._ptr(xpad), e - s, c, h, w, *padding, nt)
        im2col[dt](_ops._ptr(xpad), _ops._ptr(cols), e - s, c, hp, wp, kh, kw, *stride,
                   *dilation, oh, ow, nt)  # fmt: skip
        np.matmul(cols[:rows], wt, out=tmp[:rows])
        to_nchw[dt](_ops._ptr(tmp), op + s * img_out, bptr, e - s, p, co, nt)
    _blas.set_threads(threads)  # the budget back to BLAS, as after a threaded region
    return out


def declare(lib) -> None:
    import ctypes

    p, L, i = ctypes.c_void_p, ctypes.c_long, ctypes.c_int
    for t in ("f32", "f64"):
        fn = getattr(lib, f"im2col_{t}")
        fn.argtypes, fn.restype = (p, p) + (L,) * 12 + (i,), None
        fn = getattr(lib, f"to_nhwc_pad_{t}")
        fn.argtypes, fn.restype = (p, p) + (L,) * 6 + (i,), None
        fn = getattr(lib, f"to_nchw_{t}")
        fn.argtypes, fn.restype = (p, p, p, L, L, L, i), None
