"""float16 and bfloat16 on OpenCl: `OpenCl(float_dtype="float16")` / `"bfloat16"`.

Storage is the half type (2 bytes per element; bfloat16 buffers hold ml_dtypes' bit patterns);
every kernel computes in float32 (burn_gpu's half renderings: `vload_half` / `vstore_half_rte`
for float16, which are core OpenCL C, so any device runs it, `cl_khr_fp16` or not; bit
operations for bfloat16). Natively on half buffers: the elementwise ops and casts (burn_gpu's
eager program of the half type), the reductions, arg ops and scans (`reduce_program`),
softmax and its backward, Adam, the data movement ops (copies keep the values) and gather /
select (the int16 gather over the same bits), and matmul of two half operands on NVIDIA GPUs
of compute capability 8.0+ (`_hmatmul`: tensor cores through inline PTX). Every
other op (other matmuls, convolutions, pools, index scatters, sort, random, interpolation) takes the
float32 detour: its half operands are widened by the cast kernel, the float32 op runs, and its
float32 results are rounded back (nearest even), once per op.

`wrap_class(OpenCl)` puts the detour on the class, around every op but the native ones, so it
also serves half tensors on a float32 backend (`t.cast("bfloat16")`, a mixed-precision
policy's casts): an op without a half operand passes straight through (a loop over its
arguments, the ops it wraps are the heavy ones: matmul, convolutions, pools, ...).
"""

from __future__ import annotations

import numpy as np
from burn_gpu import FUSED
from burn_tensor import DType

from . import _ew
from ._hmatmul import hmatmul
from ._array import ClArray

HALVES = ("float16", "bfloat16")
#: ops that take half buffers as they are (everything else takes the float32 detour)
NATIVE = {
    "float_from_data",
    "float_into_data",
    "float_empty",
    "float_cast",
    "float_reshape",
    "float_permute",
    "float_swap_dims",
    "float_transpose",
    "float_slice",
    "float_slice_assign",
    "float_cat",
    "float_expand",
    "float_flip",
    "float_repeat_dim",
    "float_detach",
    "float_set_require_grad",
    "float_is_require_grad",
    "float_to_device",
    "float_sum",
    "float_mean",
    "float_sum_dim",
    "float_mean_dim",
    "float_max_dim",
    "float_min_dim",
    "float_max",
    "float_min",
    "float_argmax",
    "float_argmin",
    "float_cumsum",
    "float_cummax",
    "float_cummin",
    "float_adam_update",
    "softmax",
    "log_softmax",
    "softmax_backward",
    "log_softmax_backward",
    # burn_gpu's layer norm kernels read half storage (float32 statistics and sums)
    "layer_norm",
    "layer_norm_backward",
    # the flash pair takes halves as it did before it was declared (its eligibility check
    # sends what its kernels do not take to the decomposition)
    "attention_with_lse",
    "attention_lse_backward",
    *(
        n
        for n in FUSED
        if n.startswith("float_")
        or n in ("relu", "relu_backward", "sigmoid", "gelu", "gelu_backward")
    ),
}
#: ... except these of the expression table: their value checks or integer results come from
#: backend code written for float32/float64 (the detour runs that code on float32)
NOT_NATIVE = {"float_into_int"}


def is_half(x) -> bool:
    return type(x) is ClArray and x.dtype.name in HALVES


def _widen(a):
    if is_half(a):
        return _ew.cast(a, np.float32), a.dtype
    if a is DType.BF16 or a is DType.F16:
        return DType.F32, a.np
    if type(a) in (list, tuple) and a and any(is_half(v) for v in a):
        half = next(v.dtype for v in a if is_half(v))
        return type(a)(_ew.cast(v, np.float32) if is_half(v) else v for v in a), half
    return a, None


def _narrow(r, half):
    if type(r) is ClArray and r.dtype == np.float32:
        return _ew.cast(r, half)
    if type(r) in (list, tuple):
        return type(r)(_narrow(v, half) for v in r)
    return r


def detour(fn):
    """`fn` with half operands (and half dtype arguments) widened to float32 and its float32
    results rounded back to the half type."""

    def op(*args, **kwargs):
        half = None
        conv = []
        for a in args:
            a, h = _widen(a)
            half = half or h
            conv.append(a)
        for k, v in list(kwargs.items()):
            kwargs[k], h = _widen(v)
            half = half or h
        res = fn(*conv, **kwargs)
        return res if half is None else _narrow(res, half)

    op.__name__ = getattr(fn, "__name__", "op")
    return op


#: reads at indices: copies of the 16-bit patterns (run as int16, no value changes)
BITS = ("float_gather", "float_select")
_I16 = np.dtype(np.int16)


def _as(x: ClArray, dtype) -> ClArray:
    """The same buffer and layout read as `dtype` (of the same size)."""
    return ClArray(x.rt, x.block, x.shape, dtype, x.strides, x.offset)


def _bits(fn):
    """`fn` over half operands seen as int16 (a gather copies elements: no conversion)."""

    def op(self, *args):
        half = next((a.dtype for a in args if is_half(a)), None)
        if half is None:
            return fn(self, *args)
        res = fn(self, *(_as(a, _I16) if is_half(a) else a for a in args))
        return _as(res, half)

    op.__name__ = getattr(fn, "__name__", "op")
    return op


def _random(fn):
    """float_random for a half dtype: drawn as float32, uniform draws clipped to the type's
    last values inside [low, high) (a float32 draw just below `high` would round onto it),
    then rounded."""

    def float_random(self, shape, distribution, device, dtype):
        if dtype is not DType.BF16 and dtype is not DType.F16:
            return fn(self, shape, distribution, device, dtype)
        wide = fn(self, shape, distribution, device, DType.F32)
        if distribution.kind in ("default", "uniform") and wide.size:
            lo, hi = distribution.bounds_in(dtype.np)
            wide = _ew.scalar("clamp", wide, float(lo), float(hi))
        return _ew.cast(wide, dtype.np)

    float_random.__name__ = "float_random"
    return float_random


def _tensor_cores(fn):
    """float_matmul: two half operands on tensor cores where the device has them
    (`_hmatmul`), the float32 detour otherwise."""
    wide = detour(fn)

    def float_matmul(self, x, y):
        if is_half(x) and is_half(y):
            out = hmatmul(x, y)
            if out is not None:
                return out
        return wide(self, x, y)

    return float_matmul


def wrap_class(cls) -> None:
    """The float32 detour around every op of `cls`'s table but the native ones (once)."""
    from burn_tensor import Backend, op_table

    if getattr(cls, "_half_wrapped", False):
        return
    table = {}
    for name in op_table():
        if name in NATIVE and name not in NOT_NATIVE:
            continue
        fn = getattr(cls, name, None)
        # burn_tensor's default decompositions stay as they are (their parts handle halves;
        # Fusion tells an override from a default by identity and fuses the defaults' parts)
        if callable(fn) and fn is not getattr(Backend, name, None):
            wrap = {"float_random": _random, "float_matmul": _tensor_cores}.get(name, detour)
            wrap = _bits if name in BITS else wrap
            if name in cls.dispatch_table:
                table[name] = wrap(fn)
            else:  # a class-body op: not a dispatch-table entry
                setattr(cls, name, wrap(fn))
    # the wrapped entries are what runs, so they are the dispatch table's (`explain` reads it)
    cls.install_ops(table)
    cls._half_wrapped = True
