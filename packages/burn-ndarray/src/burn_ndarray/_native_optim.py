"""Adam's update on the native kernels: `float_adam_update` in one pass, one call.

The default (burn_tensor's FloatOps) is 13 ops: 13 passes over memory with a temporary each and,
on small parameters, 13 dispatches (~20 us for a conv kernel's 72 weights). The kernel
(`adam_f32` / `adam_f64` in kernels.c) runs the same float operations in the same order, each
rounded to the parameter's dtype and never fused into an FMA, so it returns the default's bits;
its fixed blocks make them the same for every thread count. Memory-bound: it gets the threads
the other memory-bound kernels get.

Shapes: param, grad, moment_1, moment_2 [d...] (the same; moments None on the first step) ->
(param', moment_1', moment_2'), each [d...].
"""

from __future__ import annotations

import ctypes
import math

import numpy as np

from . import _native_ops as _ops
from ._native_ops import F32, F64, GRAIN_MEMORY


def declare(lib) -> dict:
    """ctypes signatures of the two kernels (pointers as ints, scalars in the kernel's dtype)."""
    p, L, i = ctypes.c_void_p, ctypes.c_long, ctypes.c_int
    ks = {}
    for dt, suf, scalar in ((F32, "f32", ctypes.c_float), (F64, "f64", ctypes.c_double)):
        k = getattr(lib, f"adam_{suf}")
        k.argtypes = (p, p, p, p, p, p, p, L, i, *([scalar] * 7), i)
        k.restype = None
        ks[dt] = k
    return ks


def install(backend, lib, memory_threads: int, ops: dict) -> None:
    """Set `float_adam_update` in `ops` (the default stays the fallback)."""
    ks = declare(lib)
    prev = backend.float_adam_update
    ptr, cptr, nt = _ops._ptr, _ops._cptr, _ops._nt

    def float_adam_update(param, grad, moment_1, moment_2, lr, beta_1, beta_2, epsilon, time):
        dt = param.dtype
        k = ks.get(dt)
        shape = param.shape
        first = moment_1 is None
        if (
            k is None
            or grad.dtype != dt
            or grad.shape != shape
            or (first != (moment_2 is None))
            or (not first and (moment_1.dtype != dt or moment_2.dtype != dt
                               or moment_1.shape != shape or moment_2.shape != shape))
        ):  # fmt: skip
            return prev(param, grad, moment_1, moment_2, lr, beta_1, beta_2, epsilon, time)
        pp, pg = cptr(param), cptr(grad)
        pm1 = pm2 = 0
        if not first:
            pm1, pm2 = cptr(moment_1), cptr(moment_2)
        if not (pp and pg and (first or (pm1 and pm2))):  # not C-contiguous
            return prev(param, grad, moment_1, moment_2, lr, beta_1, beta_2, epsilon, time)
        # The scalars exactly as the default computes them (Python floats), cast to the dtype
        # by ctypes as the default's scalar ops cast them.
        bc2 = math.sqrt(1.0 - beta_2**time)
        factor = bc2 / (1.0 - beta_1**time)
        out_p, out_m1, out_m2 = np.empty(shape, dt), np.empty(shape, dt), np.empty(shape, dt)
        n = param.size
        k(pp, pg, pm1, pm2, ptr(out_p), ptr(out_m1), ptr(out_m2), n, 0 if first else 1,
          1.0 - beta_1, 1.0 - beta_2, beta_1, beta_2, factor, epsilon * bc2, lr,
          nt(memory_threads, n, GRAIN_MEMORY))  # fmt: skip
        return out_p, out_m1, out_m2

    ops["float_adam_update"] = float_adam_update
