"""Range checks of optimizer and scheduler settings, run when they are built.

A learning rate of NaN, an Adam `beta_1` of 2.0 or an `epsilon` of NaN are accepted by the
arithmetic and train a model of NaNs without a word; `init()`/`build()` refuse them instead, with
a `ConfigError` (a `ValueError`) naming the config and the field.
"""

from __future__ import annotations

import math
from typing import Any

from burn_nn import ConfigError


def check(
    owner: str,
    field: str,
    value: Any,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
) -> float:
    """`value` as a float if it is finite and within the bounds (None: unbounded), else raise.

    Example:
        >>> check("AdamConfig", "beta_1", 0.9, 0.0, 1.0, hi_open=True)
        0.9
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{owner}: {field} must be a number, got {value!r}") from None
    ok = math.isfinite(v)
    if ok and lo is not None:
        ok = v > lo if lo_open else v >= lo
    if ok and hi is not None:
        ok = v < hi if hi_open else v <= hi
    if not ok:
        raise ConfigError(
            f"{owner}: {field} must be {_describe(lo, hi, lo_open, hi_open)}, got {v}"
        )
    return v


def learning_rate(owner: str, lr: Any) -> float:
    """A learning rate: finite and >= 0 (0 freezes the parameters)."""
    return check(owner, "learning rate", lr, 0.0)


def _describe(lo, hi, lo_open, hi_open) -> str:
    if lo is not None and hi is not None:
        return f"a finite number in {'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}"
    if lo is not None:
        return f"a finite number {'>' if lo_open else '>='} {lo}"
    if hi is not None:
        return f"a finite number {'<' if hi_open else '<='} {hi}"
    return "a finite number"
