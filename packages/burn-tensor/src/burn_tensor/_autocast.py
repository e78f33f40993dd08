"""Autocast: an op policy that runs matmul / linear / conv in half precision, as torch's autocast.

Inside `with autocast("bfloat16"):` the compute-bound ops (`matmul`, `module.linear`,
`module.conv1d/2d/3d`, `module.conv_transpose1d/2d/3d`) cast their float inputs to the half
dtype, run in it, and cast their output back to the widest float dtype of their inputs (f32 for
an f32 model). Every other op (elementwise, reductions, softmax, norms, losses) is untouched and
so runs on the f32 tensors it is given. Parameters, gradients and optimizer state stay f32: the
casts are ordinary `cast` ops, recorded by Autodiff, whose backward casts the gradient back to
the parameter's dtype, while the matmul/conv of the backward pass run in half too (Autodiff's
rules call the inner backend on the half tensors it saved). `module.linear` is one backend op
instead (`module._linear_autocast` -> `linear_half`, whose default is those casts and ops): one node,
and on Cuda one GEMM writing the wide output.

Why here (the Tensor layer) and not a backend decorator: torch puts autocast in its dispatcher
*above* autograd, so the casts are part of the graph and gradients arrive in the parameters'
dtype. The Tensor methods are our dispatcher above `Autodiff`; a decorator below Autodiff
(`Autodiff(Autocast(B))`) would be a different backend, so a model and its batches would have to
move between devices, and a decorator above Autodiff would have to re-wrap the whole op table to
change six ops. The policy is a context variable: each thread / asyncio task has its own.

`loss_scale` (set by a loss scaler, see `burn_optim.DynamicLossScaler`): while it is set,
`Tensor.backward()` backpropagates `loss * loss_scale` so small float16 gradients do not flush
to zero; the scaler divides the gradients by the scale before the optimizer step.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from ._dtype import DType, Float

HALF_DTYPES = (DType.F16, DType.BF16)
_ALIASES = {"bf16": DType.BF16, "f16": DType.F16, "fp16": DType.F16, "half": DType.F16}


@dataclass(frozen=True)
class AutocastPolicy:
    """The active autocast: the half dtype of compute-bound ops and the backward loss scale."""

    dtype: DType
    loss_scale: float | None = None


_POLICY: ContextVar[AutocastPolicy | None] = ContextVar("burn_autocast", default=None)


def half_dtype(dtype: Any) -> DType:
    """`"bf16"`/`"bfloat16"`/`DType.BF16` -> `DType.BF16` (and f16 alike); anything else raises."""
    dt = _ALIASES.get(dtype) if isinstance(dtype, str) else None
    if dt is None:
        try:
            dt = DType.from_any(dtype)
        except (TypeError, ValueError) as e:
            raise ValueError(f"autocast: expected 'bfloat16' or 'float16', got {dtype!r}") from e
    if dt not in HALF_DTYPES:
        raise ValueError(f"autocast: expected 'bfloat16' or 'float16', got {dt.value}")
    return dt


#: the policy's getter, for the hot paths that inline the check (`matmul`, `linear`)
current_policy = _POLICY.get


def autocast_policy() -> AutocastPolicy | None:
    """The policy in effect in this context, or None outside `autocast`."""
    return _POLICY.get()


@contextmanager
def autocast(
    dtype: Any = "bfloat16", *, loss_scale: float | None = None, enabled: bool = True
) -> Iterator[AutocastPolicy | None]:
    """Run matmul / linear / conv in `dtype` (float16 or bfloat16) inside the block.

    Args:
        dtype: "bfloat16" / "bf16" or "float16" / "f16".
        loss_scale: while set, `Tensor.backward()` backpropagates `loss * loss_scale`.
        enabled: False makes the block a no-op (and turns an outer autocast off inside it).

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_tensor import Tensor
        >>> x = Tensor.ones([2, 3], NdArray().device())
        >>> with autocast("float16"):
        ...     y = x @ x.transpose()
        >>> y.dtype  # computed in float16, handed back in the inputs' dtype
        DType.F32
    """
    if loss_scale is not None and not loss_scale > 0:
        raise ValueError(f"autocast: loss_scale must be > 0, got {loss_scale!r}")
    policy = AutocastPolicy(half_dtype(dtype), loss_scale) if enabled else None
    token = _POLICY.set(policy)
    try:
        yield policy
    finally:
        _POLICY.reset(token)


#: float dtypes from widest to narrowest: a half op hands back the widest of its inputs' dtypes
FLOAT_WIDTH = {DType.F64: 0, DType.F32: 1, DType.F16: 2, DType.BF16: 3}


def _float_kind(a: Any) -> bool:
    """Whether `a` is a float Tensor (one attribute read: this runs per argument of every
    half op)."""
    o = getattr(a, "_o", None)
    return o is not None and o.kind is Float


def _cast(t: Any, dtype: DType) -> Any:
    """`t.cast(dtype)` for a float tensor `t` whose dtype is not `dtype` (the caller checked):
    the backend's cast without `Tensor.cast`'s parsing and kind checks, the same op and node."""
    return t._like(t._o.cast(t._p, dtype))


def _half_args(h: DType, args: tuple, kwargs: dict) -> tuple[list, dict, DType | None]:
    """(args, kwargs) with every float tensor cast to `h`, and the widest float dtype among
    them (each tensor's dtype read once)."""
    widest, rank = None, 9
    out = []
    for a in (*args, *kwargs.values()) if kwargs else args:
        if _float_kind(a):
            dt = a.dtype
            r = FLOAT_WIDTH.get(dt, 9)
            if r < rank:
                widest, rank = dt, r
            if dt is not h:
                a = _cast(a, h)
        out.append(a)
    n = len(args)
    return out[:n], dict(zip(kwargs, out[n:])), widest


def half_op(fn: Callable | None = None, *, bias_axis: int | None = None) -> Callable:
    """Make `fn` (an op whose float Tensor arguments may be cast) follow the autocast policy.

    Outside autocast this costs one context-variable read. Inside, float tensor arguments are
    cast to the half dtype, `fn` runs with autocast off (no nested casts), and its float output
    is cast back to the widest input dtype. With `bias_axis` (the op's third argument or
    `bias=` is a bias over that output axis), the bias is left out of the half op and added to
    its widened output: only the product runs in half, the addition and its gradient in the
    input dtype (a backend whose half type is storage for GEMMs only, as Cuda's bfloat16 on a
    float32 backend, then never sees a half elementwise op).
    """
    if fn is None:
        return lambda f: half_op(f, bias_axis=bias_axis)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        policy = _POLICY.get()
        if policy is None:
            return fn(*args, **kwargs)
        if bias_axis is not None:
            return run_half_biased(policy, fn, args, kwargs, bias_axis)
        return run_half(policy, fn, args, kwargs)

    return wrapper


def run_half_biased(
    policy: AutocastPolicy, fn: Callable, args: tuple, kwargs: dict, axis: int
) -> Any:
    """`run_half` of `fn` without its bias (third argument or `bias=`), then `+ bias` in the
    widened dtype, broadcast over every axis but `axis` of the output."""
    if len(args) > 2:
        bias = args[2]
        args = (*args[:2], None, *args[3:])
    elif "bias" in kwargs:
        kwargs = dict(kwargs)
        bias = kwargs.pop("bias")
    else:
        bias = None
    out = run_half(policy, fn, args, kwargs)
    if bias is None:
        return out
    shape = out._p.shape
    rank = len(shape)
    view = [1] * rank
    view[axis % rank] = bias._p.shape[0]
    if bias.dtype is not out.dtype:
        bias = _cast(bias, out.dtype)
    return out + bias.reshape(view)


def run_half(policy: AutocastPolicy, fn: Callable, args: tuple, kwargs: dict) -> Any:
    """`fn(*args, **kwargs)` with its float tensors cast to `policy.dtype` and autocast off
    inside; the float result is cast back to the widest input dtype. A call whose first
    argument is not a float tensor runs unchanged (the op's own checks then speak)."""
    token = _POLICY.set(None)  # off inside: `fn` may be the op that called us
    try:
        if not args or not _float_kind(args[0]):
            return fn(*args, **kwargs)
        args, kwargs, out_dtype = _half_args(policy.dtype, args, kwargs)
        out = fn(*args, **kwargs)
    finally:
        _POLICY.reset(token)
    return _cast(out, out_dtype) if _float_kind(out) and out.dtype is not out_dtype else out


def scaled_for_backward(loss: Any) -> Any:
    """`loss * loss_scale` when a loss scale is in effect, else `loss` (used by `backward`)."""
    policy = _POLICY.get()
    if policy is None or policy.loss_scale is None:
        return loss
    return loss.mul_scalar(policy.loss_scale)
