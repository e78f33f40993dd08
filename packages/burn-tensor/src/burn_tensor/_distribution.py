"""`Distribution`: how random tensors are sampled."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Distribution:
    """A sampling distribution, as Burn's `Distribution` enum.

    `Distribution.default()` (or `Distribution.Default`, with or without a call) is U[0, 1);
    `uniform(low, high)` is U[low, high); `normal(mean, std)`;
    `bernoulli(p)` gives 1.0 with probability p.

    Example:
        >>> Distribution.normal(0.0, 1.0)
        Distribution.normal(0.0, 1.0)
    """

    kind: str
    a: float = 0.0
    b: float = 1.0

    @staticmethod
    def default() -> Distribution:
        """Burn's `Distribution::Default`: uniform on [0, 1)."""
        return Distribution("default", 0.0, 1.0)

    @staticmethod
    def uniform(low: float, high: float) -> Distribution:
        """Uniform on [low, high) (Burn's `Distribution::Uniform(low, high)`); needs finite low <
        high.
        """
        if not (math.isfinite(low) and math.isfinite(high) and high > low):
            raise ValueError(
                f"Distribution.uniform: expected finite low < high, got low={low}, high={high}"
            )
        return Distribution("uniform", float(low), float(high))

    @staticmethod
    def normal(mean: float, std: float) -> Distribution:
        """Normal with `mean` and standard deviation `std` (Burn's `Distribution::Normal`); std >=
        0.
        """
        if not (math.isfinite(mean) and math.isfinite(std) and std >= 0):
            raise ValueError(
                f"Distribution.normal: expected a finite mean and a finite std >= 0, "
                f"got mean={mean}, std={std}"
            )
        return Distribution("normal", float(mean), float(std))

    @staticmethod
    def bernoulli(prob: float) -> Distribution:
        """1 with probability `prob`, else 0 (Burn's `Distribution::Bernoulli(prob)`)."""
        if not 0.0 <= prob <= 1.0:
            raise ValueError(f"Distribution.bernoulli: expected 0 <= p <= 1, got {prob}")
        return Distribution("bernoulli", float(prob), 0.0)

    # Burn-style aliases: Distribution::Uniform(a, b), Distribution::Normal(m, s), ...
    # `Distribution.Default` is set below to a value, as Burn's unit variant `Distribution::Default`.
    Uniform = uniform
    Normal = normal
    Bernoulli = bernoulli

    def bounds_in(self, dtype) -> tuple[float, float]:
        """(lo, hi): the smallest value of the float `dtype` >= low and the largest < high.

        A uniform draw made in a wider precision and then rounded to `dtype` can land on
        `high` (in float16 every draw of U[0, 1) above 1 - 2^-12 rounds to 1.0; in bfloat16
        above 1 - 2^-9): clipping the wide draw to these bounds before rounding keeps the sample
        in [low, high), because rounding is monotonic and both bounds are values of `dtype`.
        Only for `default()` / `uniform()`.

        Args:
            dtype: a numpy float dtype (ml_dtypes' bfloat16 included).

        Returns:
            (lo, hi) as Python floats, both exactly values of `dtype`.

        Example:
            >>> Distribution.default().bounds_in(np.float16)
            (0.0, 0.99951171875)
        """
        if self.kind not in ("default", "uniform"):
            raise ValueError(f"bounds_in: only uniform distributions have bounds, not {self!r}")
        t = np.dtype(dtype).type
        with np.errstate(over="ignore"):
            lo, hi = t(self.a), t(self.b)
        if float(lo) < self.a:
            lo = np.nextafter(lo, t(np.inf))
        if float(hi) >= self.b:
            hi = np.nextafter(hi, t(-np.inf))
        return float(lo), float(hi)

    def __call__(self) -> Distribution:
        """A distribution called with no arguments is itself, so both `Distribution.Default`
        (Burn's spelling, a value) and `Distribution.Default()` work."""
        return self

    def __repr__(self) -> str:
        if self.kind == "default":
            return "Distribution.default()"
        if self.kind == "bernoulli":
            return f"Distribution.bernoulli({self.a})"
        return f"Distribution.{self.kind}({self.a}, {self.b})"


Distribution.Default = Distribution("default", 0.0, 1.0)  # type: ignore[attr-defined]
