"""bfloat16 results stay bfloat16 on `NdArray(float_dtype="bfloat16")`.

bfloat16 is ml_dtypes' numpy dtype. numpy promotes it to float32 wherever a float32 operand or
scalar array meets it (scalar ops, `np.where` with float32 constants, the float32 accumulators of
sums and matmuls), so an op on bfloat16 inputs can hand back float32. On a bfloat16 backend every
op whose float inputs are all bfloat16 rounds such a float32 result once back to bfloat16 (the
f32 compute then a single rounding, as a GPU kernel computing in f32 registers does).

Composite ops (their default decomposes into several ops, each rounding to 8 bits) run on
float32 copies of their bfloat16 inputs and round once: `log_softmax_backward`'s
`g - exp(y) * sum(g)` cancels, and rounding each term left 0.15 absolute errors. ml_dtypes'
ufuncs also warn on NaN comparisons where numpy's own floats do not: bfloat16 ops run with
numpy's floating-point warnings off (NaN/inf results, as every other dtype of the backend).

Installed per instance (`NdArray.setup`) only for `float_dtype="bfloat16"`: float32 backends
pay nothing.
"""

from __future__ import annotations

import functools

import numpy as np
from burn_tensor import op_table
from burn_tensor.backend import mark_tier

# Ops whose float32 output is asked for (a cast, data in), not a promotion.
_KEEP = frozenset({"float_cast", "float_from_data", "float_into_data", "float_random"})
_F32 = np.dtype(np.float32)
# Composite ops computed on float32 copies, rounded once.
UPCAST = frozenset(
    {
        "softmax", "log_softmax", "softmax_backward", "log_softmax_backward",
        "sigmoid_backward", "log_sigmoid", "log_sigmoid_backward", "gelu", "gelu_backward",
    }
)  # fmt: skip


def _arrays(args):
    for a in args:
        if isinstance(a, np.ndarray):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (x for x in a if isinstance(x, np.ndarray))


def _down(r, bf16):
    if isinstance(r, np.ndarray):
        return r.astype(bf16) if r.dtype == _F32 else r
    if isinstance(r, tuple):
        return tuple(_down(x, bf16) for x in r)
    if isinstance(r, list):
        return [_down(x, bf16) for x in r]
    return r


def _up(a, bf16):
    return a.astype(_F32) if isinstance(a, np.ndarray) and a.dtype == bf16 else a


def _wrap(fn, bf16, upcast: bool):
    @functools.wraps(fn)
    def op(*args, **kwargs):
        with np.errstate(all="ignore"):
            if upcast:
                r = fn(*[_up(a, bf16) for a in args], **{k: _up(v, bf16) for k, v in kwargs.items()})
            else:
                r = fn(*args, **kwargs)
        arrays = _arrays((*args, *kwargs.values()))
        floats = [a.dtype for a in arrays if a.dtype.kind == "f" or a.dtype == bf16]
        if floats and all(d == bf16 for d in floats):
            return _down(r, bf16)
        return r

    return op


def install(backend) -> None:
    """Wrap every op of `backend` (a bfloat16 NdArray) so bfloat16 inputs give bfloat16."""
    bf16 = backend.float_dtype.np
    for name in op_table():
        if name in _KEEP or name.startswith(("int_", "bool_")):
            continue
        fn = getattr(backend, name, None)
        if callable(fn):
            why = "bfloat16 inputs" + (" computed in float32" if name in UPCAST else "") + (
                ", results rounded back to bfloat16"
            )
            op = _wrap(fn, bf16, name in UPCAST)
            op = mark_tier(op, "bfloat16", fn, lambda args, w=why: ("wraps", w))
            object.__setattr__(backend, name, op)
