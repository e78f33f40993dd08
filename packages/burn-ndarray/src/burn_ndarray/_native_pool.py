"""max_pool2d (with indices, and its gradient; without indices: `maxpool.c`) and avg_pool2d on
the native kernels.

One OpenMP call per op: tasks are (plane, output row), each output row computed for all its
columns at once, kernel offset by kernel offset in row-major order. The max and its index follow
`_pool.max_pool2d_with_indices` exactly (the first offset holding the max; the first NaN; padding
reads -inf), the average adds the offsets in `_pool.avg_pool2d`'s order. The gradient of max
pooling adds each plane's output gradients at their indices in order (a plane per task), so no
result depends on the thread count. Other layouts and dtypes keep the numpy paths.
"""

from __future__ import annotations

import numpy as np

from . import _native_ops as _ops
from ._im2col import out_size
from ._native_ops import F32, F64, _nt

I32, I64 = np.dtype(np.int32), np.dtype(np.int64)
GRAIN = 1 << 14  # input elements per thread at least


def _pair(v) -> tuple[int, int]:
    return (int(v[0]), int(v[1]))


def install(backend, lib, m: int, ops: dict) -> None:
    threads = backend.num_threads
    idx_dt = np.dtype(backend.int_dtype.np)
    if idx_dt not in (I32, I64):
        return
    isuf = "i32" if idx_dt == I32 else "i64"
    fwd = {F32: getattr(lib, f"maxpool_f32_{isuf}"), F64: getattr(lib, f"maxpool_f64_{isuf}")}
    bwd = {
        F32: getattr(lib, f"maxpool_bwd_f32_{isuf}"),
        F64: getattr(lib, f"maxpool_bwd_f64_{isuf}"),
    }
    avg = {F32: lib.avgpool_f32, F64: lib.avgpool_f64}
    prev_max = backend.max_pool2d_with_indices
    prev_max_bwd = backend.max_pool2d_with_indices_backward
    prev_avg = backend.avg_pool2d

    def max_pool2d_with_indices(x, kernel_size, stride, padding, dilation):
        k = fwd.get(x.dtype)
        if x.size < m or k is None or x.ndim != 4:
            return prev_max(x, kernel_size, stride, padding, dilation)
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = map(
            _pair, (kernel_size, stride, padding, dilation)
        )
        n, c, h, w = x.shape
        oh, ow = out_size(h, kh, sh, ph, dh), out_size(w, kw, sw, pw, dw)
        if oh <= 0 or ow <= 0 or n * c == 0:
            return prev_max(x, kernel_size, stride, padding, dilation)
        x = np.ascontiguousarray(x)
        out = np.empty((n, c, oh, ow), x.dtype)
        idx = np.empty((n, c, oh, ow), idx_dt)
        k(_ops._ptr(x), _ops._ptr(out), _ops._ptr(idx), n * c, h, w, oh, ow,
          kh, kw, sh, sw, ph, pw, dh, dw, _nt(threads, x.size, GRAIN))  # fmt: skip
        return out, idx

    def max_pool2d_with_indices_backward(
        x, kernel_size, stride, padding, dilation, output_grad, indices
    ):
        g = output_grad
        k = bwd.get(x.dtype)
        if (
            x.size < m
            or k is None
            or x.ndim != 4
            or g.dtype != x.dtype
            or indices.dtype != idx_dt
            or g.shape != indices.shape
        ):
            return prev_max_bwd(x, kernel_size, stride, padding, dilation, output_grad, indices)
        n, c, h, w = x.shape
        g = np.ascontiguousarray(g)
        indices = np.ascontiguousarray(indices)
        gin = np.zeros(x.shape, x.dtype)
        plane_out = g.shape[2] * g.shape[3]
        k(_ops._ptr(g), _ops._ptr(indices), _ops._ptr(gin), n * c, h * w, plane_out,
          _nt(threads, x.size, GRAIN))  # fmt: skip
        return gin

    def avg_pool2d(x, kernel_size, stride, padding, count_include_pad):
        k = avg.get(x.dtype)
        if x.size < m or k is None or x.ndim != 4:
            return prev_avg(x, kernel_size, stride, padding, count_include_pad)
        (kh, kw), (sh, sw), (ph, pw) = map(_pair, (kernel_size, stride, padding))
        n, c, h, w = x.shape
        oh, ow = out_size(h, kh, sh, ph, 1), out_size(w, kw, sw, pw, 1)
        if oh <= 0 or ow <= 0 or n * c == 0:
            return prev_avg(x, kernel_size, stride, padding, count_include_pad)
        x = np.ascontiguousarray(x)
        out = np.empty((n, c, oh, ow), x.dtype)
        k(_ops._ptr(x), _ops._ptr(out), n * c, h, w, oh, ow, kh, kw, sh, sw, ph, pw,
          int(bool(count_include_pad)), _nt(threads, x.size, GRAIN))  # fmt: skip
        return out

    noidx = {F32: lib.maxpool_noidx_f32, F64: lib.maxpool_noidx_f64}
    prev_plain = backend.max_pool2d

    def max_pool2d(x, kernel_size, stride, padding, dilation):
        """Without indices (`maxpool.c`): the indexed kernel's values, ~2x faster."""
        k = noidx.get(x.dtype)
        if x.size < m or k is None or x.ndim != 4:
            return prev_plain(x, kernel_size, stride, padding, dilation)
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = map(
            _pair, (kernel_size, stride, padding, dilation)
        )
        n, c, h, w = x.shape
        oh, ow = out_size(h, kh, sh, ph, dh), out_size(w, kw, sw, pw, dw)
        if oh <= 0 or ow <= 0 or n * c == 0:
            return prev_plain(x, kernel_size, stride, padding, dilation)
        x = np.ascontiguousarray(x)
        out = np.empty((n, c, oh, ow), x.dtype)
        k(_ops._ptr(x), _ops._ptr(out), n * c, h, w, oh, ow,
          kh, kw, sh, sw, ph, pw, dh, dw, _nt(threads, x.size, GRAIN))  # fmt: skip
        return out

    ops["max_pool2d"] = max_pool2d
    ops["max_pool2d_with_indices"] = max_pool2d_with_indices
    ops["max_pool2d_with_indices_backward"] = max_pool2d_with_indices_backward
    ops["avg_pool2d"] = avg_pool2d


def declare(lib) -> None:
    import ctypes

    p, L, i = ctypes.c_void_p, ctypes.c_long, ctypes.c_int
    for t in ("f32", "f64"):
        for s in ("i32", "i64"):
            getattr(lib, f"maxpool_{t}_{s}").argtypes = (p, p, p) + (L,) * 13 + (i,)
            getattr(lib, f"maxpool_{t}_{s}").restype = None
            getattr(lib, f"maxpool_bwd_{t}_{s}").argtypes = (p, p, p, L, L, L, i)
            getattr(lib, f"maxpool_bwd_{t}_{s}").restype = None
        getattr(lib, f"maxpool_noidx_{t}").argtypes = (p, p) + (L,) * 13 + (i,)
        getattr(lib, f"maxpool_noidx_{t}").restype = None
        getattr(lib, f"avgpool_{t}").argtypes = (p, p) + (L,) * 11 + (i, i)
        getattr(lib, f"avgpool_{t}").restype = None
