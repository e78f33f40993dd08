"""GELU and layer norm (forward and backward) on the native kernels (`_native/nn.c`).

NdArray's overrides of the ActivationOps `gelu(x)` / `gelu_backward(x, grad)` and of the NormOps
`layer_norm(x, gamma, beta, epsilon)` / `layer_norm_backward(x, gamma, grad, epsilon)`: one
ctypes call each (OpenMP inside) where the defaults are 5-10 tensor-wide ops. They keep the
previous implementation (the default decomposition) below `native_min` elements, for dtypes
other than float32/float64 and for mixed dtypes. Non-contiguous inputs are copied first. Results
do not depend on the thread count (fixed blocks; layer norm's dgamma/dbeta are added from fixed
per-block slots, in order). Layer norm's row statistics accumulate in float64.

Shapes: gelu x, grad [...] -> x's shape; layer_norm x [..., d], gamma/beta [d] -> x's shape;
layer_norm_backward -> (dx [..., d], dgamma [d], dbeta [d]).
"""

from __future__ import annotations

import ctypes

import numpy as np

from . import _native_ops as _ops
from ._native_ops import GRAIN_COMPUTE, GRAIN_MEMORY, _nt

#: rows per dgamma/dbeta slot of the layer-norm backward (LBLK in nn.c)
LBLK = 64


def declare(lib) -> None:
    p, L, i, d = ctypes.c_void_p, ctypes.c_long, ctypes.c_int, ctypes.c_double
    for t in ("f32", "f64"):
        for name, args in (
            (f"gelu_{t}", (p, p, L, i)),
            (f"gelu_bwd_{t}", (p, p, p, L, i)),
            (f"layer_norm_{t}", (p, p, p, p, L, L, d, i)),
            (f"layer_norm_bwd_{t}", (p, p, p, p, p, p, L, L, d, i)),
        ):
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = args, None


def install(backend, lib, m: int, ops: dict) -> None:
    threads = backend.num_threads
    names = ("gelu", "gelu_bwd", "layer_norm", "layer_norm_bwd")
    k = {name: _ops._kernels(lib, name) for name in names}
    ops["gelu"] = _gelu(k["gelu"], backend.gelu, m, threads)
    ops["gelu_backward"] = _gelu_bwd(k["gelu_bwd"], backend.gelu_backward, m, threads)
    ops["layer_norm"] = _layer_norm(k["layer_norm"], backend.layer_norm, m, threads)
    ops["layer_norm_backward"] = _layer_norm_bwd(
        k["layer_norm_bwd"], backend.layer_norm_backward, m, threads
    )


def _gelu(ks, prev, m, threads):
    get = ks.get

    def op(x):
        k = get(x.dtype)
        if k is None or x.size < m:
            return prev(x)
        x = np.ascontiguousarray(x)
        out = np.empty(x.shape, x.dtype)
        k(_ops._ptr(x), _ops._ptr(out), x.size, _nt(threads, x.size, GRAIN_COMPUTE))
        return out

    return op


def _gelu_bwd(ks, prev, m, threads):
    get = ks.get

    def op(x, grad):
        k = get(x.dtype)
        if k is None or x.size < m or grad.dtype != x.dtype or grad.shape != x.shape:
            return prev(x, grad)
        x, grad = np.ascontiguousarray(x), np.ascontiguousarray(grad)
        out = np.empty(x.shape, x.dtype)
        n = x.size
        k(_ops._ptr(x), _ops._ptr(grad), _ops._ptr(out), n, _nt(threads, n, GRAIN_COMPUTE))
        return out

    return op


def _same_dtype(x, *others) -> bool:
    return all(o is None or o.dtype == x.dtype for o in others)


def _layer_norm(ks, prev, m, threads):
    get = ks.get

    def op(x, gamma, beta, epsilon):
        k = get(x.dtype)
        if k is None or x.size < m or not _same_dtype(x, gamma, beta):
            return prev(x, gamma, beta, epsilon)
        x, gamma = np.ascontiguousarray(x), np.ascontiguousarray(gamma)
        beta = None if beta is None else np.ascontiguousarray(beta)
        d = x.shape[-1]
        out = np.empty(x.shape, x.dtype)
        k(
            _ops._ptr(x), _ops._ptr(gamma), None if beta is None else _ops._ptr(beta),
            _ops._ptr(out), x.size // d, d, float(epsilon), _nt(threads, x.size, GRAIN_MEMORY),
        )  # fmt: skip
        return out

    return op


def _layer_norm_bwd(ks, prev, m, threads):
    get = ks.get

    def op(x, gamma, grad, epsilon):
        k = get(x.dtype)
        if k is None or x.size < m or not _same_dtype(x, gamma, grad) or grad.shape != x.shape:
            return prev(x, gamma, grad, epsilon)
        x, gamma, grad = (np.ascontiguousarray(a) for a in (x, gamma, grad))
        d = x.shape[-1]
        rows = x.size // d
        slots = -(-rows // LBLK)
        dx = np.empty(x.shape, x.dtype)
        dg, db = np.zeros((slots, d), x.dtype), np.zeros((slots, d), x.dtype)
        k(
            _ops._ptr(x), _ops._ptr(gamma), _ops._ptr(grad), _ops._ptr(dx), _ops._ptr(dg),
            _ops._ptr(db), rows, d, float(epsilon), _nt(threads, x.size, GRAIN_MEMORY),
        )  # fmt: skip
        # slot sums in float64, in slot order: the same bits for every thread count
        dgamma = dg.sum(axis=0, dtype=np.float64).astype(x.dtype)
        dbeta = db.sum(axis=0, dtype=np.float64).astype(x.dtype)
        return dx, dgamma, dbeta

    return op


__all__ = ["declare", "install"]
