"""Argument checks shared by Tensor methods. Each raises `TensorCheckError` naming the op."""

from __future__ import annotations

import operator

from ._check_data import int_range
from ._dtype import Bool, Float, Int
from ._errors import TensorCheckError


def dim(op: str, d, rank: int) -> int:
    """Normalize a possibly negative dim; error if out of range."""
    try:
        d = operator.index(d)
    except TypeError:
        raise TensorCheckError(op, f"dim must be an int, got {d!r}") from None
    if d < -rank or d >= rank:
        raise TensorCheckError(op, f"dim {d} out of range for a rank-{rank} tensor")
    return d + rank if d < 0 else d


def kind(op: str, t, *kinds) -> None:
    if t._o.kind not in kinds:
        names = " or ".join(k.value for k in kinds)
        raise TensorCheckError(op, f"expected a {names} tensor, got {t._o.kind.value}")


def numeric(op: str, t) -> None:
    if t._o.kind is Bool:
        raise TensorCheckError(op, "expected a Float or Int tensor, got Bool")


def float_(op: str, t) -> None:
    if t._o.kind is not Float:
        raise TensorCheckError(op, f"is only defined for Float tensors, got {t._o.kind.value}")


def binary(op: str, a, b) -> None:
    """Same kind, device, rank, and dims equal or 1 (Burn broadcasting)."""
    from ._tensor import Tensor

    if not isinstance(b, Tensor):
        raise TensorCheckError(op, f"expected a Tensor, got {type(b).__name__}")
    problems = []
    if a._o.kind is not b._o.kind:
        problems.append(f"kinds differ: lhs is {a._o.kind.value}, rhs is {b._o.kind.value}")
    if a._d is not b._d:
        problems.append(device_mismatch(a, b))
    sa, sb = a._p.shape, b._p.shape
    if len(sa) != len(sb):
        problems.append(
            f"ranks differ: lhs rank {len(sa)} {list(sa)}, rhs rank {len(sb)} {list(sb)} "
            "(Burn does not promote ranks implicitly: unsqueeze the smaller one)"
        )
    else:
        bad = [i for i, (x, y) in enumerate(zip(sa, sb)) if x != y and x != 1 and y != 1]
        if bad:
            problems.append(
                f"shapes {list(sa)} and {list(sb)} are not broadcastable at dim(s) {bad}"
            )
    if problems:
        raise TensorCheckError(op, problems)


def broadcast_shape(op: str, sa, sb) -> None:
    if len(sa) != len(sb):
        raise TensorCheckError(
            op, f"ranks differ: {list(sa)} vs {list(sb)} (unsqueeze the smaller one)"
        )
    for i, (x, y) in enumerate(zip(sa, sb)):
        if x != y and x != 1 and y != 1:
            raise TensorCheckError(op, f"shapes {list(sa)} and {list(sb)} differ at dim {i}")


def same_device(op: str, a, b) -> None:
    if a._d is not b._d:
        raise TensorCheckError(op, device_mismatch(a, b))


def describe(t) -> str:
    """Where a tensor lives, for error messages: `float32 on Cpu of NdArray()`."""
    return f"{t.dtype.value} on {t._d!r} of {t._d.backend!r}"


def device_mismatch(a, b, names=("lhs", "rhs")) -> str:
    """`devices differ: lhs is float32 on Cpu of NdArray(), rhs is float64 on ...` plus how to
    fix it: the device repr alone ("Cpu" vs "Cpu") hides that the backends differ."""
    ba, bb = a._d.backend, b._d.backend
    msg = f"devices differ: {names[0]} is {describe(a)}, {names[1]} is {describe(b)}"
    if ba.inner is bb or bb.inner is ba:
        return msg + (
            " (one is the autodiff backend of the other: lift with Tensor.from_inner(t) or "
            "lower with t.inner())"
        )
    return msg + " (move one with .to_device(other.device))"


def scalar_for(op: str, t, value):
    """Convert a Python scalar for a tensor of t's kind; ints refuse non-integral floats and
    values outside the tensor's int dtype (numpy would raise a bare OverflowError)."""
    k = t._o.kind
    v = scalar_of_kind(op, k, value)
    if k is Int:
        lo, hi = int_range(t._p.dtype)
        if not lo <= v <= hi:
            raise TensorCheckError(
                op, f"scalar {v} does not fit the tensor's {t._p.dtype} [{lo}, {hi}]"
            )
    return v


def scalar_of_kind(op: str, k, value):
    """`scalar_for` by kind (creation ops have no tensor yet)."""
    if k is Float:
        try:
            return float(value)
        except (TypeError, ValueError):
            raise TensorCheckError(op, f"expected a number, got {value!r}") from None
    if k is Int:
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, int):
            return value
        try:
            f = float(value)
        except (TypeError, ValueError):
            raise TensorCheckError(op, f"expected a number, got {value!r}") from None
        if f.is_integer():
            return int(f)
        raise TensorCheckError(
            op, f"Int tensor with non-integral scalar {value!r}: convert with .float() first"
        )
    return bool(value)


def mask(op: str, t, m) -> None:
    from ._tensor import Tensor

    if not isinstance(m, Tensor) or m._o.kind is not Bool:
        got = m._o.kind.value if isinstance(m, Tensor) else type(m).__name__
        raise TensorCheckError(op, f"mask must be a Bool tensor, got {got}")
    broadcast_shape(op, t._p.shape, m._p.shape)
    same_device(op, t, m)


def int_indices(op: str, idx) -> None:
    from ._tensor import Tensor

    if not isinstance(idx, Tensor) or idx._o.kind is not Int:
        got = idx._o.kind.value if isinstance(idx, Tensor) else type(idx).__name__
        raise TensorCheckError(op, f"indices must be an Int tensor, got {got}")


KINDS = (Float, Int, Bool)
