"""`Tolerance`: Burn's approximate-equality rule."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Tolerance:
    """Relative + absolute tolerance: `x == y or |x - y| < max(absolute, relative * max(|x|, |y|))`.

    Presets as in Burn: `strict()` (relative 0, absolute 64 * smallest normal of the dtype),
    `balanced()` = `default()` (relative 0.005, absolute 1e-5), `permissive()` (0.01, 0.01).

    Example:
        >>> Tolerance.default().approx_eq(1.0, 1.004)
        True
    """

    relative: float = 0.005
    absolute: float = 1e-5

    def __post_init__(self) -> None:
        if not 0.0 <= self.relative <= 1.0:
            raise ValueError(f"Tolerance: relative must be in [0, 1], got {self.relative}")
        if self.absolute < 0.0:
            raise ValueError(f"Tolerance: absolute must be >= 0, got {self.absolute}")

    @staticmethod
    def default() -> Tolerance:
        """Burn's default tolerance: relative 0.5 %, absolute 1e-5 (`balanced` is the same)."""
        return Tolerance(0.005, 1e-5)

    balanced = default

    @staticmethod
    def strict(dtype: str = "float32") -> Tolerance:
        """No relative slack, an absolute one of 64 times the smallest normal number of `dtype`."""
        return Tolerance(0.0, 64 * float(np.finfo(dtype).tiny))

    @staticmethod
    def permissive() -> Tolerance:
        """Relative 1 % and absolute 0.01 (Burn's `Tolerance::permissive`)."""
        return Tolerance(0.01, 0.01)

    @staticmethod
    def rel_abs(relative: float, absolute: float) -> Tolerance:
        """A tolerance with the given relative and absolute bounds (Burn's `rel_abs`)."""
        return Tolerance(float(relative), float(absolute))

    @staticmethod
    def relative_(relative: float) -> Tolerance:
        """Only a relative bound (Burn's `Tolerance::relative`; the underscore keeps the field name
        free).
        """
        return Tolerance(float(relative), 0.0)

    @staticmethod
    def absolute_(absolute: float) -> Tolerance:
        """Only an absolute bound (Burn's `Tolerance::absolute`; the underscore keeps the field name
        free).
        """
        return Tolerance(0.0, float(absolute))

    def set_relative(self, relative: float) -> Tolerance:
        """A copy with the relative bound replaced (Burn's `set_relative`)."""
        return Tolerance(float(relative), self.absolute)

    def set_absolute(self, absolute: float) -> Tolerance:
        """A copy with the absolute bound replaced (Burn's `set_absolute`)."""
        return Tolerance(self.relative, float(absolute))

    def close_mask(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Elementwise approx-equality; NaN == NaN and same-sign infinities are equal (as Burn)."""
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(x - y)
            bound = np.maximum(self.absolute, self.relative * np.maximum(np.abs(x), np.abs(y)))
            ok = (x == y) | (diff < bound)
        return ok | (np.isnan(x) & np.isnan(y))

    def approx_eq(self, x: float, y: float) -> bool:
        """Whether two numbers are equal within this tolerance (NaN equals NaN) (Burn's
        `approx_eq`).
        """
        return bool(self.close_mask(np.asarray(x), np.asarray(y)))
