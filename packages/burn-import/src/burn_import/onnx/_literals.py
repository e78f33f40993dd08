"""Python literals the code generator writes: plain values (`lit`), flat arrays (`literal`),
and float attributes whose repr stays a literal (`FloatLit`, `_coerce`)."""

from __future__ import annotations

import math

import numpy as np


def literal(arr: np.ndarray) -> str:
    """A flat Python list literal of `arr` (non-finite floats spelled so that they parse)."""
    return lit(arr.reshape(-1).tolist())


class FloatLit(float):
    """A float attribute whose `repr` is always a Python expression (`float('nan')`, not
    `nan`), so `{value!r}` in a converter's f-string stays a literal."""

    def __repr__(self) -> str:
        return lit(float(self))

    __str__ = __repr__


def lit(value) -> str:
    """The Python literal of a plain value: bool, int, float (non-finite spelled
    `float('inf')`), str (through `repr`), None, and lists/tuples of them.

    Example:
        >>> print(lit([1, 2.5, float("-inf"), "a'b", None, (True,)]))
        [1, 2.5, float('-inf'), "a'b", None, (True,)]
    """
    if value is None or isinstance(value, (bool, np.bool_)):
        return repr(None if value is None else bool(value))
    if isinstance(value, (int, np.integer)):
        return repr(int(value))
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return repr(f) if math.isfinite(f) else f"float({str(f)!r})"
    if isinstance(value, str):
        return ascii(value)  # the generated source stays ASCII
    if isinstance(value, list):
        return "[" + ", ".join(lit(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(lit(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    raise TypeError(f"no literal for {type(value).__name__}")


def _coerce(value):
    """An attribute value as the plain Python types converters write into code."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, float):
        return FloatLit(value)
    if isinstance(value, list):
        return [_coerce(v) for v in value]
    return value
