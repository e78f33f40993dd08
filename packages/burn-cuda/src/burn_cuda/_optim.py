"""The fused optimizer update (`float_adam_update`) as one kernel per parameter: burn_gpu's
`adam_program` (the kernel OpenCl runs) through the driver launcher.

burn-optim's Adam calls `burn_tensor.ops.adam_update` once per parameter; the default
decomposition is 13 cupy launches (each ~10-30 us of Python and dispatch on the host for a
small model), this is one. Float32/float64 C-contiguous operands launch directly; strided
operands are copied contiguous first, and float16 runs in float32 around the kernel (the
float32 math and the rounding back to half are what a half kernel computing in float does).
Inside a captured step's resident op (`_capture_resident`), `launch_adam` launches the
kernel's SCALARS_FROM form instead, reading factor, denom and lr from the step's scalar block.
"""

from __future__ import annotations

import math

import numpy as np

from . import _platform
from ._capture_resident import active
from ._dtypes import kernel_dtype
from ._kernels import kernel, launch_grid

BLOCK = 256
_SCALARS: dict = {}


def _scalars(dt, lr, beta_1, beta_2, epsilon, time) -> tuple:
    """The kernel's 7 scalar arguments in the parameters' dtype (float32 scalars fill a C
    `float`): b1, 1 - b1, b2, 1 - b2, the bias-correction factor, epsilon * sqrt(1 - b2^t), lr.
    Cached on the step's hyper-parameters: every parameter of a step uses the same."""
    key = (dt, lr, beta_1, beta_2, epsilon, time)
    v = _SCALARS.get(key)
    if v is None:
        bc2 = math.sqrt(1.0 - beta_2**time)
        factor = bc2 / (1.0 - beta_1**time)
        sc = dt.type
        v = (sc(beta_1), sc(1.0 - beta_1), sc(beta_2), sc(1.0 - beta_2), sc(factor),
             sc(epsilon * bc2), sc(lr))  # fmt: skip
        if len(_SCALARS) > 64:  # one entry per step count and learning rate: keep it small
            _SCALARS.clear()
        _SCALARS[key] = v
    return v


def launch_adam(kernel_of, kd, grid, operands, n, first, lr, beta_1, beta_2, epsilon, time):
    """Launch a one-tensor Adam kernel on `grid` blocks: `kernel_of(False)` with `operands`
    (the 7 arrays), n, first and the 7 scalars of kernel scalar dtype `kd`; inside a captured
    step's resident op, `kernel_of(True)` (the SCALARS_FROM form) with the first 4 scalars and
    the address of the other 3 in the step's scalar block, which holds the same values."""
    scalars = _scalars(kd, lr, beta_1, beta_2, epsilon, time)
    block = active()
    at = None if block is None else block.adam(kd, lr, beta_1, beta_2, epsilon, time)
    head = (*operands, np.int64(n), np.int32(first))
    if at is None:
        launch_grid(kernel_of(False), grid, BLOCK, *head, *scalars)
    else:
        launch_grid(kernel_of(True), grid, BLOCK, *head, *scalars[:4], at)


def raw_fits(dt, param, grad, moment_1, moment_2) -> bool:
    """Whether the kernels (this one-tensor kernel and `_optim_many`'s) take a parameter's
    operands as they are: all of dtype `dt` (float32/float64, checked by the caller) and
    C-contiguous; the moments are None on a first step. `_c_contiguous` and dtype-object
    comparisons because `flags.c_contiguous` built a flags object and `dtype in (np.float32,
    ...)` converted the types, ~1 us each, for every parameter."""
    if param.dtype != dt or grad.dtype != dt or not (param._c_contiguous and grad._c_contiguous):
        return False
    if moment_1 is None:
        return True
    return (
        moment_1.dtype == dt
        and moment_2.dtype == dt
        and moment_1._c_contiguous
        and moment_2._c_contiguous
    )


def _contiguous(cp, kd, *arrays):
    return [None if a is None else cp.ascontiguousarray(a, dtype=kd) for a in arrays]


class CudaOptimOps:
    """Mixin of `Cuda`: optimizer updates as single kernels."""

    def float_adam_update(self, param, grad, moment_1, moment_2, lr, beta_1, beta_2, epsilon, time):
        cp = _platform.load_cupy()
        dt = kd = param.dtype
        if not raw_fits(dt, param, grad, moment_1, moment_2) or dt != kernel_dtype(dt):
            kd = kernel_dtype(dt)  # float16 -> float32; others copied contiguous
            param, grad, moment_1, moment_2 = _contiguous(cp, kd, param, grad, moment_1, moment_2)
        first = moment_1 is None
        m1 = param if first else moment_1  # unread on the first step
        m2 = param if first else moment_2
        nd, shape = cp.ndarray, param.shape
        out = (nd(shape, kd), nd(shape, kd), nd(shape, kd))
        n = param.size
        if n:
            grid = min((n + BLOCK - 1) // BLOCK, 4096)
            # the driver launcher: cupy's RawKernel call packed these 16 arguments (7 numpy
            # scalars) in ~20 us of host time; the scalars are shared by a step (cached)
            launch_adam(
                lambda at: kernel("adam_update_at" if at else "adam_update", kd), kd, grid,
                (param, grad, m1, m2, *out), n, first, lr, beta_1, beta_2, epsilon, time,
            )  # fmt: skip
        return out if kd == dt else tuple(o.astype(dt) for o in out)
