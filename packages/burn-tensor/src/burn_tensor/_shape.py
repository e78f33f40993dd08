"""`Shape`: the dimensions of a tensor."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

_INTS = (int, np.integer)


class Shape(tuple):
    """Tensor dimensions, a tuple of ints with Burn's helpers.

    A `Shape` is also callable (returning itself), so both `t.shape` (PyTorch) and `t.shape()` (Burn) work.

    Example:
        >>> s = Shape(2, 3)
        >>> s.dims, s.num_elements(), s.num_dims()
        ([2, 3], 6, 2)
    """

    __slots__ = ()

    def __new__(cls, *dims: int | Iterable[int]) -> Shape:
        if len(dims) == 1 and not isinstance(dims[0], _INTS):
            dims = tuple(dims[0])  # type: ignore[arg-type]
        # Fast path: plain non-negative Python ints (every shape a primitive reports); `t.shape`
        # builds a Shape on each read.
        for d in dims:
            if type(d) is not int or d < 0:
                break
        else:
            return super().__new__(cls, dims)
        out = []
        for d in dims:
            if isinstance(d, bool) or not isinstance(d, _INTS):
                raise TypeError(f"Shape: dims must be ints, got {d!r} in {dims!r}")
            if d < 0:
                raise ValueError(f"Shape: dims must be >= 0, got {d} in {tuple(dims)!r}")
            out.append(int(d))
        return super().__new__(cls, out)

    def __call__(self) -> Shape:
        return self

    @property
    def dims(self) -> list[int]:
        """The dims as a list of ints (Burn's `Shape::dims`)."""
        return list(self)

    def num_dims(self) -> int:
        """The number of dims (Burn's `num_dims`; `rank` is the same)."""
        return len(self)

    rank = num_dims

    def num_elements(self) -> int:
        """The number of elements, the product of the dims (Burn's `num_elements`)."""
        return math.prod(self)

    def to_vec(self) -> list[int]:
        """The dims as a new list of ints (Burn's `to_vec`)."""
        return list(self)

    def __repr__(self) -> str:
        return f"Shape({list(self)})"

    def __str__(self) -> str:
        return str(list(self))
