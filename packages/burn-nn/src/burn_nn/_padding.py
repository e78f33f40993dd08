"""`PaddingConfig1d` / `PaddingConfig2d` / `PaddingConfig3d`: Same, Valid or Explicit padding (Burn's `nn::PaddingConfig*`)."""

from __future__ import annotations

import math
from typing import Any

from ._codec import ConfigError


class _Padding:
    """A variant enum value: `X.Same`, `X.Valid`, `X.Explicit(...)`."""

    __slots__ = ("variant", "values", "_hash")
    _n_explicit = 0  # number of values of Burn's Explicit variant

    def __init__(self, variant: str, *values: int):
        object.__setattr__(self, "variant", variant)
        object.__setattr__(self, "values", tuple(int(v) for v in values))
        # computed once: conv modules look their options up by padding on every forward
        object.__setattr__(self, "_hash", hash((type(self).__name__, variant, self.values)))

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    @classmethod
    def Explicit(cls, *values: int):  # noqa: N802 - Burn's variant name
        n = cls._n_explicit
        if len(values) == 1 and isinstance(values[0], list | tuple):
            values = tuple(values[0])
        if len(values) == n // 2:
            values = tuple(values) * 2  # symmetric shorthand (older Burn: Explicit(h, w))
        if len(values) != n or any(int(v) < 0 for v in values):
            raise ValueError(
                f"{cls.__name__}.Explicit takes {n // 2} or {n} non-negative ints, got {values}"
            )
        return cls("Explicit", *values)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and (self.variant, self.values) == (
            other.variant,
            other.values,
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        name = f"{type(self).__name__}.{self.variant}"
        return f"{name}({', '.join(map(str, self.values))})" if self.variant == "Explicit" else name

    def __reduce__(self):
        return (type(self), (self.variant, *self.values))

    def _to_json_value(self) -> Any:
        return {"Explicit": list(self.values)} if self.variant == "Explicit" else self.variant

    @classmethod
    def _from_json_value(cls, value: Any, where: str = "padding"):
        if value in ("Same", "Valid"):
            return getattr(cls, value)
        if isinstance(value, dict) and list(value) == ["Explicit"]:
            vals = value["Explicit"]
            return cls.Explicit(*(vals if isinstance(vals, list) else [vals]))
        raise ConfigError(
            f'{where}: expected "Same", "Valid" or {{"Explicit": [...]}}, got {value!r}'
        )

    @classmethod
    def coerce(cls, value: Any):
        """Accept the enum, "same"/"valid", an int or a tuple (explicit)."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str) and value.capitalize() in ("Same", "Valid"):
            return getattr(cls, value.capitalize())
        if isinstance(value, int):
            return cls.Explicit(*([value] * (cls._n_explicit // 2)))
        if isinstance(value, list | tuple):
            return cls.Explicit(*value)
        raise TypeError(
            f"{cls.__name__}: cannot use {value!r} as padding (expected {cls.__name__}.Same, "
            f'.Valid or .Explicit(...), "same"/"valid", an int or a tuple of ints)'
        )

    def pads(self, sizes, kernel, stride, dilation) -> list[tuple[int, int]]:
        """`(before, after)` per spatial dim for inputs of `sizes` (Same puts the odd pixel after)."""
        if self.variant == "Valid":
            return [(0, 0)] * len(sizes)
        if self.variant == "Explicit":
            n = len(sizes)
            return [(self.values[i], self.values[i + n]) for i in range(n)]
        out = []
        for size, k, s, d in zip(sizes, kernel, stride, dilation):
            total = max((math.ceil(size / s) - 1) * s + (k - 1) * d + 1 - size, 0)
            out.append((total // 2, total - total // 2))
        return out


class PaddingConfig1d(_Padding):
    """`Same` (output length ceil(len / stride)), `Valid` (none), `Explicit(left, right)`.

    Example:
        >>> PaddingConfig1d.Explicit(1), PaddingConfig1d.Same
        (PaddingConfig1d.Explicit(1, 1), PaddingConfig1d.Same)
    """

    __slots__ = ()
    _n_explicit = 2


class PaddingConfig2d(_Padding):
    """`Same`, `Valid`, `Explicit(top, left, bottom, right)` (or `Explicit(h, w)`, symmetric).

    Example:
        >>> PaddingConfig2d.Explicit(1, 1).pads([8, 8], [3, 3], [1, 1], [1, 1])
        [(1, 1), (1, 1)]
    """

    __slots__ = ()
    _n_explicit = 4


class PaddingConfig3d(_Padding):
    """`Same`, `Valid`, `Explicit(front, top, left, back, bottom, right)` (or `Explicit(d, h, w)`,
    symmetric), for `Conv3d` and the 3-D pools.

    Example:
        >>> PaddingConfig3d.Explicit(1, 0, 2).pads([4, 4, 4], [3, 1, 5], [1, 1, 1], [1, 1, 1])
        [(1, 1), (0, 0), (2, 2)]
    """

    __slots__ = ()
    _n_explicit = 6


for _cls in (PaddingConfig1d, PaddingConfig2d, PaddingConfig3d):
    type.__setattr__(_cls, "Same", _cls("Same"))
    type.__setattr__(_cls, "Valid", _cls("Valid"))


def split_pads(pads: list[tuple[int, int]]) -> tuple[list[int], list[tuple[int, int]] | None]:
    """Symmetric part for the op's `padding` argument, plus the leftover to pad by hand (or None)."""
    sym = [min(a, b) for a, b in pads]
    extra = [(a - s, b - s) for (a, b), s in zip(pads, sym)]
    return sym, (extra if any(a or b for a, b in extra) else None)


def pad_input(x, extra: list[tuple[int, int]], value: float = 0.0):
    """Pad the spatial dims of `[n, c, ...]` by `(before, after)` per dim (last dim first for pad)."""
    flat: list[int] = []
    for before, after in reversed(extra):
        flat += [before, after]
    return x.pad(tuple(flat), value)
