"""`Distribution`: how random tensors are sampled."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Distribution:
    """A sampling distribution, as Burn's `Distribution` enum.

    `Distribution.default()` is U[0, 1); `uniform(low, high)` is U[low, high); `normal(mean, std)`;
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
        return Distribution("default", 0.0, 1.0)

    @staticmethod
    def uniform(low: float, high: float) -> Distribution:
        if not high > low:
            raise ValueError(
                f"Distribution.uniform: expected low < high, got low={low}, high={high}"
            )
        return Distribution("uniform", float(low), float(high))

    @staticmethod
    def normal(mean: float, std: float) -> Distribution:
        if std < 0:
            raise ValueError(f"Distribution.normal: expected std >= 0, got {std}")
        return Distribution("normal", float(mean), float(std))

    @staticmethod
    def bernoulli(prob: float) -> Distribution:
        if not 0.0 <= prob <= 1.0:
            raise ValueError(f"Distribution.bernoulli: expected 0 <= p <= 1, got {prob}")
        return Distribution("bernoulli", float(prob), 0.0)

    # Burn-style aliases: Distribution::Uniform(a, b), Distribution::Normal(m, s), ...
    Uniform = uniform
    Normal = normal
    Bernoulli = bernoulli
    Default = default

    def __repr__(self) -> str:
        if self.kind == "default":
            return "Distribution.default()"
        if self.kind == "bernoulli":
            return f"Distribution.bernoulli({self.a})"
        return f"Distribution.{self.kind}({self.a}, {self.b})"
