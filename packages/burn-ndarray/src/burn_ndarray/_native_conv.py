"""conv2d forward on the native kernels: parallel C im2col, one BLAS GEMM per batch chunk with
the budget's BLAS threads, a parallel C transpose back to NCHW with the bias added.

The numpy path (`_conv`, `_winograd`) splits the batch over the Python pool, one BLAS thread per
part, with numpy im2col copies / Winograd transforms per part: on 16 cores its dispatch and its
single-threaded transform passes left conv2d 10-13x behind torch. Here the copies run as OpenMP
loops and the GEMM [n*oh*ow, K] @ [K, c_out] is large enough for every BLAS thread.

Installed from `MIN_THREADS` threads on (or with a forced `parallel_min`, for tests): on the
2-core development machine the numpy path (batch halves on two threads, the GEMM writing NCHW
directly) measured faster, 3->64 [32, 3, 32, 32] 9 ms against 26 ms here (min of 3 runs, the
machine shared and loaded), and the guide's training step 130 ms against 169 ms. Winograd
F(2x2, 3x3) needs 2.25x fewer multiply-adds, so shapes it suits keep it below
`WINOGRAD_MAX_THREADS` threads (where its transforms are not the bottleneck); grouped convs keep
the numpy path. `BURN_NDARRAY_NATIVE_CONV=0` keeps the numpy conv path alone.
"""

from __future__ import annotations

import ctypes
import os

import numpy as np

from . import _blas, _winograd
from . import _native_ops as _ops
from ._im2col import out_size
from ._native_ops import F32, F64, _nt

CHUNK_BYTES = 16 << 20  # im2col columns materialised at once (as _im2col.CHUNK_BYTES)
WINOGRAD_MAX_THREADS = 8
MIN_THREADS = 8
GRAIN = 1 << 14


def _pair(v) -> tuple[int, int]:
    return (int(v[0]), int(v[1]))


def install(backend, lib, m: int, ops: dict) -> None:
    threads = backend.num_threads
    if threads < MIN_THREADS and not backend.parallel_min_forced:
        return
    if os.environ.get("BURN_NDARRAY_NATIVE_CONV", "1").strip() == "0":
        return  # the numpy conv path with the other kernels native (for comparisons)
    im2col = {F32: lib.im2col_f32, F64: lib.im2col_f64}
    to_nhwc = {F32: lib.to_nhwc_pad_f32, F64: lib.to_nhwc_pad_f64}
    to_nchw = {F32: lib.to_nchw_f32, F64: lib.to_nchw_f64}
    prev = backend.conv2d

    def conv2d(x, weight, bias, options):
        k = im2col.get(x.dtype)
        if (
            k is None
            or x.size < m
            or options.groups != 1
            or x.ndim != 4
            or weight.dtype != x.dtype
            or (bias is not None and bias.dtype != x.dtype)
        ):
            return prev(x, weight, bias, options)
        stride, padding, dilation = map(_pair, (options.stride, options.padding, options.dilation))
        n, c, h, w = x.shape
        co, _, kh, kw = weight.shape
        oh = out_size(h, kh, stride[0], padding[0], dilation[0])
        ow = out_size(w, kw, stride[1], padding[1], dilation[1])
        if oh <= 0 or ow <= 0 or n == 0 or co == 0:
            return prev(x, weight, bias, options)
        if threads < WINOGRAD_MAX_THREADS and _winograd.suits(
            x.shape, weight.shape, stride, padding, dilation, 1, (oh, ow)
        ):
            return prev(x, weight, bias, options)
        dt = x.dtype
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
            k(_ops._ptr(xpad), _ops._ptr(cols), e - s, c, hp, wp, kh, kw, *stride, *dilation,
              oh, ow, nt)  # fmt: skip
            np.matmul(cols[:rows], wt, out=tmp[:rows])
            to_nchw[dt](_ops._ptr(tmp), op + s * img_out, bptr, e - s, p, co, nt)
        _blas.set_threads(threads)  # the budget back to BLAS, as after a threaded region
        return out

    ops["conv2d"] = conv2d


def declare(lib) -> None:
    p, L, i = ctypes.c_void_p, ctypes.c_long, ctypes.c_int
    for t in ("f32", "f64"):
        fn = getattr(lib, f"im2col_{t}")
        fn.argtypes, fn.restype = (p, p) + (L,) * 12 + (i,), None
        fn = getattr(lib, f"to_nhwc_pad_{t}")
        fn.argtypes, fn.restype = (p, p) + (L,) * 6 + (i,), None
        fn = getattr(lib, f"to_nchw_{t}")
        fn.argtypes, fn.restype = (p, p, p, L, L, L, i), None
