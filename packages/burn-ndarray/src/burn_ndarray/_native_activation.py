"""Activations on the native kernels (`_native/act.c`, relu's gradient in `kernels.c`).

NdArray's overrides of ActivationOps' `sigmoid`, `silu`, `hard_swish`, `sigmoid_backward`, `hard_sigmoid`,
`leaky_relu`, `log_sigmoid` and `relu_backward`: one pass each where the defaults are 2-7
tensor-wide ops (sigmoid's `mask_where` alone ran at ~3.6 ns per element). Each keeps the
previous implementation (`_numpy_activation`, the defaults' formulas in numpy) below
`native_min` elements, for dtypes other than float32/float64 and for mixed dtypes;
non-contiguous inputs are copied first for sigmoid / log_sigmoid (exp rounds the same either
way) and take numpy's path for the exact ops (the same bits). Shapes: x [...] -> x's shape;
sigmoid_backward / relu_backward: output, grad [d...] (the same) -> [d...].
"""

from __future__ import annotations

import ctypes

import numpy as np

from . import _native_ops as _ops
from ._native_ops import F32, _nt

F32_MAX = float(np.finfo(np.float32).max)


def declare(lib) -> None:
    """Argument types of act.c's kernels."""
    p, L, i = ctypes.c_void_p, ctypes.c_long, ctypes.c_int
    for t, ct in (("f32", ctypes.c_float), ("f64", ctypes.c_double)):
        for name, args in (
            (f"un_sigmoid_{t}", (p, p, L, i)),
            (f"un_silu_{t}", (p, p, L, i)),
            (f"un_hard_swish_{t}", (p, p, L, i)),
            (f"un_log_sigmoid_{t}", (p, p, L, i)),
            (f"sigmoid_bwd_{t}", (p, p, p, L, i)),
            (f"hard_sigmoid_{t}", (p, p, L, ct, ct, i)),
            (f"leaky_relu_{t}", (p, p, L, ct, i)),
        ):
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = args, None


def install(backend, lib, m: int, ops: dict, threads_for) -> None:
    """Put the native activations into `ops` (name -> op); `threads_for(short)` gives
    (threads, grain, compute-bound) as for the other native ops."""

    def prev(name):
        return getattr(backend, name)

    for name in ("sigmoid", "log_sigmoid", "silu"):
        p = prev(name)
        t, g, _ = threads_for("exp")  # compute-bound, as exp
        ops[name] = _ops._unary(lib, name, p, m, t, g, True, _ops._small(backend, name, p))
    # exact (no exp): a strided input takes the default's path, which gives the same bits
    p = prev("hard_swish")
    t, g, _ = threads_for("mul")
    ops["hard_swish"] = _ops._unary(
        lib, "hard_swish", p, m, t, g, False, _ops._small(backend, "hard_swish", p)
    )
    t, g, _ = threads_for("relu_backward")
    ops["relu_backward"] = same_shape(lib, "relu_bwd", prev("relu_backward"), m, t, g)
    ops["sigmoid_backward"] = _pair(_ops._kernels(lib, "sigmoid_bwd"),
                                    prev("sigmoid_backward"), m, t, g)  # fmt: skip
    for name in ("hard_sigmoid", "leaky_relu"):
        ops[name] = _scalars(_ops._kernels(lib, name), prev(name), m, t, g)


def same_shape(lib, kname, prev, m, threads, grain):
    """A binary kernel on two same-shape, same-dtype, C-contiguous operands (e.g. relu's
    gradient, whose default is two ops: a compare and a mask_fill); else `prev`."""
    ks = _ops._kernels(lib, "bin_" + kname)
    for k in ks.values():  # not in `_native._declare`'s list: its signature here
        k.argtypes, k.restype = _ops._kernels(lib, "bin_add")[F32].argtypes, None
    get = ks.get

    def op(x, y):
        dt = x.dtype
        k = get(dt)
        if k is None or x.size < m or y.dtype != dt or x.shape != y.shape:
            return prev(x, y)
        px, py = _ops._cptr(x), _ops._cptr(y)
        if not (px and py):
            return prev(x, y)
        out = np.empty(x.shape, dt)
        n = x.size
        k(px, py, _ops._ptr(out), 1, n, 0, 1, 0, 1, _nt(threads, n, grain))
        return out

    return op


def _pair(ks, prev, m, threads, grain):
    """f(y, g) -> [same shape] for same-shape, same-dtype, C-contiguous operands; else `prev`."""
    get = ks.get

    def op(y, g):
        dt = y.dtype
        k = get(dt)
        if k is None or y.size < m or g.dtype != dt or y.shape != g.shape:
            return prev(y, g)
        py, pg = _ops._cptr(y), _ops._cptr(g)
        if not (py and pg):
            return prev(y, g)
        out = np.empty(y.shape, dt)
        n = y.size
        k(py, pg, _ops._ptr(out), n, _nt(threads, n, grain))
        return out

    return op


def _scalars(ks, prev, m, threads, grain):
    """f(x, *scalars) with the scalars rounded to x's dtype, as numpy's scalar ops take them; a
    scalar that overflows the dtype (numpy then gives inf/nan with its own flags) or a
    non-contiguous x takes `prev`."""
    get = ks.get

    def op(x, *scalars):
        k = get(x.dtype)
        if k is None or x.size < m:
            return prev(x, *scalars)
        px = _ops._cptr(x)
        if not px:
            return prev(x, *scalars)
        if any(isinstance(s, np.ndarray) for s in scalars):  # a tensor operand: numpy's path
            return prev(x, *scalars)
        try:
            vals = [float(s) for s in scalars]
        except TypeError:
            return prev(x, *scalars)
        if x.dtype == F32 and any(F32_MAX < abs(v) < float("inf") for v in vals):
            return prev(x, *scalars)
        out = np.empty(x.shape, x.dtype)
        n = x.size
        k(px, _ops._ptr(out), n, *vals, _nt(threads, n, grain))
        return out

    return op


__all__ = ["declare", "install", "same_shape"]
