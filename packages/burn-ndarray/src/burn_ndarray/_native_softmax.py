"""softmax / log_softmax and their gradients on the native kernels (`kernels.c`, SOFTMAX).

NdArray's overrides of the ActivationOps `softmax(x, dim)`, `log_softmax(x, dim)`,
`softmax_backward(y, grad, dim)` (grad_x = y * (grad - sum(grad * y, dim))) and
`log_softmax_backward(y, grad, dim)` (grad_x = grad - exp(y) * sum(grad, dim)): one ctypes call
each, the tensor viewed as [outer, n, inner] around `dim` (any dim, no transpose), split over
OpenMP threads by rows (inner 1) or by chunks of 32 rows of each [n, inner] slab (`kernels.c`).
Against the default decomposition (max_dim, sub, exp, sum_dim, div: five passes and four
temporaries) it reads the input twice and writes once (plus one pass over each row or chunk
while it is in cache).

Falls back to the previous op (the default decomposition) below `native_min` elements, for
dtypes other than float32/float64, for operands of different shapes, and when the kernel cannot
allocate its per-chunk statistics; an empty tensor gives an empty result of its shape.
Non-contiguous inputs are copied first (a row's result does not depend on its layout). Results
do not depend on the thread count (rows and chunks are fixed by the shape); float32 statistics
accumulate in float64.

Shapes: x, y, grad [d0, ..., dk]; dim in [-k-1, k]; every result has x's shape.
"""

from __future__ import annotations

import ctypes

import numpy as np

from . import _native_ops as _ops
from ._native_ops import F32, F64, GRAIN_COMPUTE, GRAIN_MEMORY, NATIVE_MEMORY_MIN_THREADS, _nt
from ._native_reduce import _collapse

FORWARD = ("softmax", "log_softmax")
BACKWARD = ("softmax_backward", "log_softmax_backward")


def declare(lib) -> None:
    """ctypes signatures of the softmax kernels (pointers as ints)."""
    p, L, i = ctypes.c_void_p, ctypes.c_long, ctypes.c_int
    for t in ("f32", "f64"):
        fwd, bwd = getattr(lib, f"softmax_{t}"), getattr(lib, f"softmax_bwd_{t}")
        # 0, or 1 when the kernel could not allocate its per-chunk statistics
        fwd.argtypes, fwd.restype = (p, p, L, L, L, i, i), i
        bwd.argtypes, bwd.restype = (p, p, p, L, L, L, i, i), i


def _axis(x, dim: int) -> tuple[int, int, int]:
    """(outer, n, inner) of x around `dim` (normalised; IndexError if out of range)."""
    nd = x.ndim
    d = dim + nd if dim < 0 else dim
    if not 0 <= d < nd:
        raise IndexError(f"softmax: dim {dim} out of range for a tensor of rank {nd}")
    return _collapse(x, d)


def install(backend, lib, m: int, ops: dict) -> None:
    """Set the four ops in `ops` where the backend has them (ActivationOps defaults)."""
    declare(lib)
    threads = backend.num_threads
    # softmax's gradient is memory-bound: one thread below NATIVE_MEMORY_MIN_THREADS (_native_ops)
    memory_threads = threads
    if not backend.parallel_min_forced and threads < NATIVE_MEMORY_MIN_THREADS:
        memory_threads = 1
    fwd = {F32: lib.softmax_f32, F64: lib.softmax_f64}
    bwd = {F32: lib.softmax_bwd_f32, F64: lib.softmax_bwd_f64}
    for log, name in enumerate(FORWARD):
        prev = getattr(backend, name, None)
        if prev is not None:
            ops[name] = _forward(fwd, prev, m, threads, log)
    for log, name in enumerate(BACKWARD):
        prev = getattr(backend, name, None)
        if prev is not None:
            # log_softmax's gradient takes an exp per element; softmax's is two memory passes
            t, grain = (threads, GRAIN_COMPUTE) if log else (memory_threads, GRAIN_MEMORY)
            ops[name] = _backward(bwd, prev, m, t, grain, log)


def _forward(kernels, prev, m, threads, log):
    get = kernels.get

    def op(x, dim):
        k = get(x.dtype)
        if k is None or 0 < x.size < m:
            return prev(x, dim)
        outer, n, inner = _axis(x, dim)
        if x.size == 0:  # nothing to normalise: an empty result of x's shape
            return np.empty(x.shape, x.dtype)
        x = np.ascontiguousarray(x)
        out = np.empty(x.shape, x.dtype)
        nt = _nt(threads, x.size, GRAIN_COMPUTE)
        if k(_ops._ptr(x), _ops._ptr(out), outer, n, inner, log, nt):
            return prev(x, dim)  # out of memory for the statistics: the decomposition
        return out

    return op


def _backward(kernels, prev, m, threads, grain, log):
    get = kernels.get

    def op(y, grad, dim):
        k = get(y.dtype)
        if k is None or 0 < y.size < m or grad.dtype != y.dtype or grad.shape != y.shape:
            return prev(y, grad, dim)
        outer, n, inner = _axis(y, dim)
        if y.size == 0:
            return np.empty(y.shape, y.dtype)
        y, grad = np.ascontiguousarray(y), np.ascontiguousarray(grad)
        out = np.empty(y.shape, y.dtype)
        nt = _nt(threads, y.size, grain)
        if k(_ops._ptr(y), _ops._ptr(grad), _ops._ptr(out), outer, n, inner, log, nt):
            return prev(y, grad, dim)
        return out

    return op
