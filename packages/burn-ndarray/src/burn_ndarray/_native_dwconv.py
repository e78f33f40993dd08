"""Depthwise and grouped conv2d forward on the native kernels (`_native/dwconv.c`, `conv.c`).

Depthwise (groups == input channels, any channel multiplier): one OpenMP region of direct
sliding windows per (image, output channel) plane, `schedule(dynamic, 1)` so a descheduled
thread holds one plane, not a static share. Other groupings (1 < groups < channels): each
group's slice through the groups-1 native conv (`_native_conv`), concatenated; this replaces
the numpy path's per-group im2col + GEMM (and its `filter_classes` per group).

Results do not depend on the thread count (each output summed by one thread in (i, j) order).
Gradients stay on the backend's numpy paths.
"""

from __future__ import annotations

import ctypes

import numpy as np

from . import _native_ops as _ops
from ._im2col import out_size
from ._native_conv import _check_channels, _geom, _pair
from ._native_ops import F32, F64, _nt

# Multiply-adds per OpenMP thread at least, so tiny convs wake few threads.
MAC_GRAIN = 1 << 18


def _grouped(lib, threads, x, weight, bias, groups, stride, padding, dilation, out_hw):
    """Shapes: x [n, c, h, w], weight [co, c / groups, kh, kw], bias [co] | None ->
    [n, co, oh, ow]."""
    dt = x.dtype
    fn = lib.dwconv2d_fwd_f32 if dt == F32 else lib.dwconv2d_fwd_f64
    x, w = np.ascontiguousarray(x), np.ascontiguousarray(weight)
    b = None if bias is None else np.ascontiguousarray(bias)
    n, co = x.shape[0], w.shape[0]
    out = np.empty((n, co, *out_hw), dt)
    geom = _geom(x.shape, w.shape, stride, padding, dilation, out_hw)
    macs = out.size * w[0].size
    nt = _nt(threads, macs, MAC_GRAIN)
    bp = None if b is None else _ops._ptr(b)
    if fn(_ops._ptr(x), _ops._ptr(w), bp, _ops._ptr(out), _ops._ptr(geom), groups, nt) != 0:
        raise MemoryError("burn-ndarray native grouped conv2d: could not allocate its buffers")
    return out


def _covered(x, weight, bias, options) -> bool:
    g = options.groups
    return (
        g > 1
        and x.dtype in (F32, F64)
        and x.ndim == 4
        and weight.ndim == 4
        and weight.dtype == x.dtype
        and (bias is None or bias.dtype == x.dtype)
        and x.shape[1] == weight.shape[1] * g
        and weight.shape[0] % g == 0
        and x.shape[0] > 0
        and weight.shape[0] > 0
    )


def install(backend, lib, m: int, ops: dict) -> None:
    """conv2d with groups > 1 as native ops in `ops` (after `_native_conv.install`)."""
    threads = backend.num_threads
    prev = ops.get("conv2d") or (lambda *a: type(backend).conv2d(backend, *a))

    def conv2d(x, weight, bias, options):
        _check_channels("conv2d", x, weight, options.groups)
        if not _covered(x, weight, bias, options):
            return prev(x, weight, bias, options)
        stride, padding, dilation = map(_pair, (options.stride, options.padding, options.dilation))
        _, c, h, w = x.shape
        kh, kw = weight.shape[2:]
        oh = out_size(h, kh, stride[0], padding[0], dilation[0])
        ow = out_size(w, kw, stride[1], padding[1], dilation[1])
        if oh <= 0 or ow <= 0 or min(stride) <= 0 or min(dilation) <= 0 or min(padding) < 0:
            return prev(x, weight, bias, options)
        g = options.groups
        return _grouped(lib, threads, x, weight, bias, g, stride, padding, dilation, (oh, ow))

    ops["conv2d"] = conv2d


def declare(lib) -> None:
    p, L, i = ctypes.c_void_p, ctypes.c_long, ctypes.c_int
    for t in ("f32", "f64"):
        fn = getattr(lib, f"dwconv2d_fwd_{t}")
        fn.argtypes, fn.restype = (p, p, p, p, p, L, i), i
