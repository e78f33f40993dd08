"""Arguments of the creation ops given in forms a user may reach for: a kind by name
(`Tensor.full(shape, 3, device, "Int")`), a distribution constructor left uncalled."""

from __future__ import annotations

from ._distribution import Distribution
from ._dtype import Bool, DType, Float, Int, TensorKind
from ._errors import TensorCheckError


def distribution_arg(op: str, distribution) -> Distribution:
    """`random`'s distribution: None is U[0, 1); an uncalled constructor is a clear error."""
    if distribution is None:
        return Distribution.default()
    if isinstance(distribution, Distribution):
        return distribution
    raise TensorCheckError(
        op,
        f"expected a Distribution, got {distribution!r}: call the constructor with its "
        "parameters, e.g. Distribution.uniform(0.0, 1.0) or Distribution.normal(0.0, 1.0)",
    )


def kind_arg(op: str, kind) -> TensorKind:
    """A kind given by name (`"Int"`, `"float"`) or as the `Float`/`Int`/`Bool` value."""
    if isinstance(kind, str):
        for k in (Float, Int, Bool):
            if kind.lower() == k.value.lower():
                return k
        try:
            DType.from_any(kind)
            hint = f"; {kind!r} is a dtype: pass dtype={kind!r}"
        except TypeError:
            hint = ""
        raise TensorCheckError(op, f"kind must be Float, Int or Bool, got {kind!r}{hint}")
    raise TensorCheckError(
        op, f"kind must be Float, Int or Bool (or one of those names), got {kind!r}"
    )
