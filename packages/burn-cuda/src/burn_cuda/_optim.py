"""The fused optimizer update (`float_adam_update`) as one CUDA kernel per parameter.

burn-optim's Adam calls `burn_tensor.ops.adam_update` once per parameter; the default
decomposition is 13 cupy launches (each ~10-30 us of Python and dispatch on the host for a
small model), this is one. The arithmetic is the default's, in the order it runs there
(float32 math for float32/float16 tensors, float64 for float64), except that NVRTC may contract
`a * b + c` into one fused multiply-add: results agree within float rounding, not bitwise.
"""

from __future__ import annotations

import math

import numpy as np

from . import _platform
from ._kernels import launch_grid

_BODY = """
    {F} a = ({F})m1 * b1 + ({F})g * c1;
    {F} v = ({F})m2 * b2 + (({F})g * ({F})g) * c2;
    m1_out = (T)a;
    m2_out = (T)v;
    p_out = (T)(({F})p - ((a * factor) / (sqrt(v) + denom)) * lr);
"""
_KERNELS: dict[str, object] = {}

#: the contiguous path: a grid-stride RawKernel (~7 us to launch from Python) instead of the
#: ElementwiseKernel above (~70 us of argument processing per call for 11 arguments, measured on
#: the H100 host); the ElementwiseKernel stays for strided operands and float16
#: one element of the update, shared by the one-tensor and the multi-tensor kernel
#: (`_optim_many.py`) so both compute the same bits
STEP = """
        {F} gi = g[i];
        {F} a = first ? gi * c1 : m1[i] * b1 + gi * c1;
        {F} v = first ? (gi * gi) * c2 : m2[i] * b2 + (gi * gi) * c2;
        m1o[i] = a;
        m2o[i] = v;
        po[i] = p[i] - ((a * factor) / (sqrt(v) + denom)) * lr;
"""
RAW_SOURCE = (
    """
extern "C" __global__ void burn_adam_raw_{F}(
    const {F}* p, const {F}* g, const {F}* m1, const {F}* m2, {F}* po, {F}* m1o, {F}* m2o,
    long long n, int first, {F} b1, {F} c1, {F} b2, {F} c2, {F} factor, {F} denom, {F} lr)
{{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)blockDim.x * gridDim.x) {{"""
    + STEP
    + """    }}
}}
"""
)
_RAW: dict[str, object] = {}
_RAW_DTYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
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


def _raw(ctype: str):
    k = _RAW.get(ctype)
    if k is None:
        cp = _platform.load_cupy()
        k = _RAW[ctype] = cp.RawKernel(RAW_SOURCE.format(F=ctype), f"burn_adam_raw_{ctype}")
    return k


def _kernel(double: bool):
    key = "f64" if double else "f32"
    k = _KERNELS.get(key)
    if k is None:
        cp = _platform.load_cupy()
        f, s = ("double", "float64") if double else ("float", "float32")
        scalars = ", ".join(f"{s} {n}" for n in ("b1", "c1", "b2", "c2", "factor", "denom", "lr"))
        k = cp.ElementwiseKernel(
            f"T p, T g, T m1, T m2, {scalars}",
            "T p_out, T m1_out, T m2_out",
            _BODY.format(F=f),
            f"burn_adam_update_{key}",
        )
        _KERNELS[key] = k
    return k


def raw_fits(dt, param, grad, moment_1, moment_2) -> bool:
    """Whether the raw kernels (this one-tensor kernel and `_optim_many`'s) take a parameter's
    operands: all of dtype `dt` (float32/float64, checked by the caller) and C-contiguous; the
    moments are None on a first step. `_c_contiguous` and dtype-object comparisons because
    `flags.c_contiguous` built a flags object and `dtype in (np.float32, ...)` converted the
    types, ~1 us each, for every parameter."""
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


class CudaOptimOps:
    """Mixin of `Cuda`: optimizer updates as single kernels."""

    def float_adam_update(self, param, grad, moment_1, moment_2, lr, beta_1, beta_2, epsilon, time):
        cp = _platform.load_cupy()
        dt = param.dtype
        first = moment_1 is None
        if dt in _RAW_DTYPES and raw_fits(dt, param, grad, moment_1, moment_2):
            m1 = param if first else moment_1  # unread on the first step
            m2 = param if first else moment_2
            nd, shape = cp.ndarray, param.shape
            out = (nd(shape, dt), nd(shape, dt), nd(shape, dt))
            n = param.size
            if n:
                grid = min((n + BLOCK - 1) // BLOCK, 4096)
                # the driver launcher: cupy's RawKernel call packed these 16 arguments
                # (7 numpy scalars) in ~20 us of host time; the scalars are shared by every
                # parameter of a step (cached)
                scalars = _scalars(dt, lr, beta_1, beta_2, epsilon, time)
                launch_grid(
                    _raw(_RAW_DTYPES[dt]), grid, BLOCK, param, grad, m1, m2, out[0], out[1],
                    out[2], np.int64(n), np.int32(first), *scalars,
                )  # fmt: skip
            return out
        bc2 = math.sqrt(1.0 - beta_2**time)
        factor = bc2 / (1.0 - beta_1**time)
        if moment_1 is None:  # first step: moments start at zero
            moment_1 = cp.zeros_like(param)
            moment_2 = moment_1
        double = param.dtype == np.float64
        sc = np.float64 if double else np.float32
        p, m1, m2 = _kernel(double)(
            param, grad, moment_1, moment_2,
            sc(beta_1), sc(1.0 - beta_1), sc(beta_2), sc(1.0 - beta_2),
            sc(factor), sc(epsilon * bc2), sc(lr),
        )  # fmt: skip
        return p, m1, m2
