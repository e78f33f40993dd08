"""conv3d, conv_transpose3d and the 3-D pools on the native kernels of `_native/vol.c`.

- conv3d: per image, vol2col (threaded over column rows) then one GEMM per group in numpy's BLAS
  (weight [c_out/g, c_in/g * taps] @ columns [c_in/g * taps, od*oh*ow]), written into the
  NCDHW output; the bias added after.
- conv_transpose3d: its adjoint, per image one GEMM per group (weight^T @ x) giving the columns
  of the output volume, then col2vol (threaded over channels) adds them into it.
- max_pool3d(_with_indices), avg_pool3d: one task per (plane, output depth, output row).
Float32/float64 contiguous-able inputs only; other dtypes keep the contract's defaults (2-D ops).
Results do not depend on the thread count (see vol.c).
"""

from __future__ import annotations

import ctypes

import numpy as np

from . import _native_ops as _ops
from ._native_ops import F32, F64, _nt

I32, I64 = np.dtype(np.int32), np.dtype(np.int64)
GRAIN = 1 << 14  # elements per thread at least


def _out(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _geom(c, size, out, k, s, p, d):
    """The `vol_geom` struct of vol.c, as a long array kept alive by the caller."""
    return np.array([c, *size, *out, *k, *s, *p, *d], dtype=np.int64)


def install(backend, lib, m: int, ops: dict) -> None:
    threads = backend.num_threads
    idx_dt = np.dtype(backend.int_dtype.np)
    suf = {F32: "f32", F64: "f64"}
    prev = {n: getattr(backend, n) for n in (
        "conv3d", "conv_transpose3d", "max_pool3d_with_indices", "max_pool3d", "avg_pool3d")}

    def run(name, dt, *args):
        getattr(lib, f"{name}_{suf[dt]}")(*args)

    def conv3d(x, weight, bias, options):
        if x.dtype not in suf or weight.dtype != x.dtype or x.size < m or x.ndim != 5:
            return prev["conv3d"](x, weight, bias, options)
        n, c_in, *size = x.shape
        c_out, cig, *k = weight.shape
        g = options.groups
        out = [_out(size[i], k[i], options.stride[i], options.padding[i], options.dilation[i])
               for i in range(3)]
        if min(out) <= 0 or n == 0:
            return prev["conv3d"](x, weight, bias, options)
        x = np.ascontiguousarray(x)
        geom = _geom(c_in, size, out, k, options.stride, options.padding, options.dilation)
        taps, length = k[0] * k[1] * k[2], out[0] * out[1] * out[2]
        cols = np.empty((c_in * taps, length), x.dtype)
        wm = np.ascontiguousarray(weight).reshape(g, c_out // g, cig * taps)
        y = np.empty((n, c_out, length), x.dtype)
        nt = _nt(threads, cols.size, GRAIN)
        for b in range(n):
            run("vol2col", x.dtype, _ops._ptr(x[b]), _ops._ptr(cols), geom.ctypes.data, nt)
            cg = cols.reshape(g, cig * taps, length)
            np.matmul(wm, cg, out=y[b].reshape(g, c_out // g, length))
        y = y.reshape(n, c_out, *out)
        if bias is not None:
            y += bias.reshape(1, c_out, 1, 1, 1).astype(x.dtype, copy=False)
        return y

    def conv_transpose3d(x, weight, bias, options):
        if x.dtype not in suf or weight.dtype != x.dtype or x.size < m or x.ndim != 5:
            return prev["conv_transpose3d"](x, weight, bias, options)
        n, c_in, *size = x.shape
        _, cog, *k = weight.shape
        g = options.groups
        c_out = cog * g
        s, p, po, d = options.stride, options.padding, options.padding_out, options.dilation
        full = [(size[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + po[i] + 1 for i in range(3)]
        if min(full) <= 0 or n == 0:
            return prev["conv_transpose3d"](x, weight, bias, options)
        # the output volume is the "image" of vol.c, the input the column grid
        geom = _geom(c_out, full, size, k, s, p, d)
        taps, length = k[0] * k[1] * k[2], size[0] * size[1] * size[2]
        wt = np.ascontiguousarray(weight).reshape(g, c_in // g, cog * taps).transpose(0, 2, 1)
        xs = np.ascontiguousarray(x).reshape(n, g, c_in // g, length)
        y = np.zeros((n, c_out, *full), x.dtype)
        cols = np.empty((g, cog * taps, length), x.dtype)
        nt = _nt(threads, y[0].size, GRAIN)
        for b in range(n):
            np.matmul(wt, xs[b], out=cols)
            run("col2vol", x.dtype, _ops._ptr(cols), _ops._ptr(y[b]), geom.ctypes.data, nt)
        if bias is not None:
            y += bias.reshape(1, c_out, 1, 1, 1).astype(x.dtype, copy=False)
        return y

    def _pool_geom(x, k, s, p, d):
        n, c, *size = x.shape
        out = [_out(size[i], k[i], s[i], p[i], d[i]) for i in range(3)]
        return n, c, out, _geom(n * c, size, out, k, s, p, d)

    def max_pool3d_with_indices(x, kernel_size, stride, padding, dilation):
        args = (x, kernel_size, stride, padding, dilation)
        if x.dtype not in suf or idx_dt not in (I32, I64) or x.size < m or x.ndim != 5:
            return prev["max_pool3d_with_indices"](*args)
        n, c, out, geom = _pool_geom(x, kernel_size, stride, padding, dilation)
        if min(out) <= 0 or n * c == 0:
            return prev["max_pool3d_with_indices"](*args)
        x = np.ascontiguousarray(x)
        y = np.empty((n, c, *out), x.dtype)
        idx = np.empty((n, c, *out), idx_dt)
        isuf = "i32" if idx_dt == I32 else "i64"
        fn = getattr(lib, f"maxpool3d_{suf[x.dtype]}_{isuf}")
        fn(_ops._ptr(x), _ops._ptr(y), _ops._ptr(idx), geom.ctypes.data,
           _nt(threads, x.size, GRAIN))  # fmt: skip
        return y, idx

    def max_pool3d(x, kernel_size, stride, padding, dilation):
        if x.dtype not in suf or idx_dt not in (I32, I64) or x.size < m or x.ndim != 5:
            return prev["max_pool3d"](x, kernel_size, stride, padding, dilation)
        return max_pool3d_with_indices(x, kernel_size, stride, padding, dilation)[0]

    def avg_pool3d(x, kernel_size, stride, padding, count_include_pad):
        if x.dtype not in suf or x.size < m or x.ndim != 5:
            return prev["avg_pool3d"](x, kernel_size, stride, padding, count_include_pad)
        n, c, out, geom = _pool_geom(x, kernel_size, stride, padding, (1, 1, 1))
        if min(out) <= 0 or n * c == 0:
            return prev["avg_pool3d"](x, kernel_size, stride, padding, count_include_pad)
        x = np.ascontiguousarray(x)
        y = np.empty((n, c, *out), x.dtype)
        run("avgpool3d", x.dtype, _ops._ptr(x), _ops._ptr(y), geom.ctypes.data,
            int(bool(count_include_pad)), _nt(threads, x.size, GRAIN))
        return y

    ops["conv3d"] = conv3d
    ops["conv_transpose3d"] = conv_transpose3d
    ops["max_pool3d_with_indices"] = max_pool3d_with_indices
    ops["max_pool3d"] = max_pool3d
    ops["avg_pool3d"] = avg_pool3d


def declare(lib) -> None:
    p, i = ctypes.c_void_p, ctypes.c_int
    for t in ("f32", "f64"):
        for name in ("vol2col", "col2vol"):
            fn = getattr(lib, f"{name}_{t}")
            fn.argtypes, fn.restype = (p, p, p, i), None
        for s in ("i32", "i64"):
            fn = getattr(lib, f"maxpool3d_{t}_{s}")
            fn.argtypes, fn.restype = (p, p, p, p, i), None
        fn = getattr(lib, f"avgpool3d_{t}")
        fn.argtypes, fn.restype = (p, p, p, i, i), None
