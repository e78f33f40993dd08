"""Confusion-matrix metrics: `PrecisionMetric`, `RecallMetric`, `FBetaScoreMetric`.

Predictions become booleans through a `DecisionRule` (threshold for binary/multi-label, top-k
for multi-class); true/false positives and false negatives are counted per class, then reduced
over classes with `ClassReduction` (micro: pool the counts; macro: average per-class ratios,
skipping classes where the ratio is undefined). The batch value is computed from the batch's
counts and the epoch value (`running_value`) from the counts accumulated over the epoch, which
is not the mean of batch ratios.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._base import Metric, MetricEntry, MetricMetadata, Numeric, NumericEntry, to_numpy
from ._state import FormatOptions


@dataclass
class ConfusionStatsInput:
    """Input of the confusion metrics: `predictions` `[batch, n_classes]` scores and `targets`
    `[batch, n_classes]` booleans (one-hot for multi-class)."""

    predictions: Any
    targets: Any


class ClassReduction(enum.Enum):
    """How per-class counts are reduced: `MICRO` pools counts, `MACRO` averages class ratios."""

    MICRO = "Micro"
    MACRO = "Macro"
    Micro = MICRO  # Burn's spelling
    Macro = MACRO


@dataclass(frozen=True)
class DecisionRule:
    """`DecisionRule.threshold(0.5)` or `DecisionRule.top_k(1)`: scores -> predicted classes."""

    kind: str
    value: float

    @classmethod
    def threshold(cls, value: float = 0.5) -> DecisionRule:
        return cls("threshold", float(value))

    @classmethod
    def top_k(cls, k: int = 1) -> DecisionRule:
        return cls("top_k", int(k))

    Threshold = threshold  # Burn's variant names
    TopK = top_k

    def apply(self, scores: np.ndarray) -> np.ndarray:
        if self.kind == "threshold":
            return scores >= self.value
        k = int(self.value)
        top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        mask = np.zeros(scores.shape, dtype=bool)
        np.put_along_axis(mask, top, True, axis=1)
        return mask


@dataclass(frozen=True)
class ClassificationMetricConfig:
    """Decision rule and class reduction shared by the confusion metrics."""

    decision_rule: DecisionRule = DecisionRule.threshold(0.5)
    class_reduction: ClassReduction = ClassReduction.MICRO


def confusion_counts(item: ConfusionStatsInput, rule: DecisionRule) -> tuple[np.ndarray, ...]:
    """Per-class (tp, fp, fn) counts and the number of samples."""
    scores = np.atleast_2d(to_numpy(item.predictions).astype(np.float64))
    targets = to_numpy(item.targets).astype(bool).reshape(scores.shape)
    preds = rule.apply(scores)
    tp = (preds & targets).sum(axis=0).astype(np.float64)
    fp = (preds & ~targets).sum(axis=0).astype(np.float64)
    fn = (~preds & targets).sum(axis=0).astype(np.float64)
    return tp, fp, fn, scores.shape[0]


def _reduce(num: np.ndarray, den: np.ndarray, reduction: ClassReduction) -> float:
    if reduction is ClassReduction.MICRO:
        total = den.sum()
        return float(num.sum() / total) if total > 0 else math.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = num / den
    ratios = ratios[~np.isnan(ratios)]
    return float(ratios.mean()) if ratios.size else math.nan


class _ConfusionMetric(Metric, Numeric):
    Input = ConfusionStatsInput
    _label = "Confusion"

    def __init__(self, config: ClassificationMetricConfig | None = None) -> None:
        self.config = config or ClassificationMetricConfig()
        self.clear()

    @classmethod
    def binary(cls, threshold: float = 0.5, **kw: Any):
        return cls(ClassificationMetricConfig(DecisionRule.threshold(threshold)), **kw)

    @classmethod
    def multiclass(cls, top_k: int = 1, class_reduction=ClassReduction.MICRO, **kw: Any):
        return cls(ClassificationMetricConfig(DecisionRule.top_k(top_k), class_reduction), **kw)

    @classmethod
    def multilabel(cls, threshold: float = 0.5, class_reduction=ClassReduction.MICRO, **kw: Any):
        return cls(
            ClassificationMetricConfig(DecisionRule.threshold(threshold), class_reduction), **kw
        )

    def name(self) -> str:
        return self._label

    def _ratio(self, tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> float:
        raise NotImplementedError

    def update(self, item: ConfusionStatsInput, metadata: MetricMetadata) -> MetricEntry:
        tp, fp, fn, n = confusion_counts(item, self.config.decision_rule)
        self.totals = (
            [a + b for a, b in zip(self.totals, (tp, fp, fn))] if self.totals else [tp, fp, fn]
        )
        self.current = 100.0 * self._ratio(tp, fp, fn)
        self.running = 100.0 * self._ratio(*self.totals)
        self.count = n
        fmt = FormatOptions(self.name()).unit("%").precision(2)
        formatted = f"epoch {fmt.format(self.running)} - batch {fmt.format(self.current)}"
        return MetricEntry(
            self.name(), formatted, NumericEntry.Aggregated(self.current, n).serialize()
        )

    def clear(self) -> None:
        self.totals: list[np.ndarray] = []
        self.current = math.nan
        self.running = math.nan
        self.count = 0

    def value(self) -> float:
        return self.current

    def running_value(self) -> float:
        return self.running


class PrecisionMetric(_ConfusionMetric):
    """Precision in percent: tp / (tp + fp).

    Example:
        >>> m = PrecisionMetric.binary(0.5)
        >>> _ = m.update(ConfusionStatsInput([[0.9], [0.8], [0.1]], [[1], [0], [1]]),
        ...              MetricMetadata.fake())
        >>> m.value()
        50.0
    """

    _label = "Precision"

    def _ratio(self, tp, fp, fn) -> float:
        return _reduce(tp, tp + fp, self.config.class_reduction)


class RecallMetric(_ConfusionMetric):
    """Recall in percent: tp / (tp + fn).

    Example:
        >>> m = RecallMetric.multiclass(1)
        >>> _ = m.update(ConfusionStatsInput([[0.9, 0.1], [0.2, 0.8]], [[1, 0], [1, 0]]),
        ...              MetricMetadata.fake())
        >>> m.value()
        50.0
    """

    _label = "Recall"

    def _ratio(self, tp, fp, fn) -> float:
        return _reduce(tp, tp + fn, self.config.class_reduction)


class FBetaScoreMetric(_ConfusionMetric):
    """F-beta score in percent: (1+b²)tp / ((1+b²)tp + b²fn + fp); beta=1 is the F1 score.

    Example:
        >>> m = FBetaScoreMetric.binary(beta=1.0, threshold=0.5)
        >>> _ = m.update(ConfusionStatsInput([[0.9], [0.8], [0.1]], [[1], [0], [1]]),
        ...              MetricMetadata.fake())
        >>> m.value()
        50.0
    """

    _label = "FBetaScore"

    def __init__(self, config: ClassificationMetricConfig | None = None, beta: float = 1.0):
        self.beta = float(beta)
        super().__init__(config)

    @classmethod
    def binary(cls, beta: float = 1.0, threshold: float = 0.5):  # type: ignore[override]
        return super().binary(threshold, beta=beta)

    @classmethod
    def multiclass(cls, beta: float = 1.0, top_k: int = 1, class_reduction=ClassReduction.MICRO):  # type: ignore[override]
        return super().multiclass(top_k, class_reduction, beta=beta)

    @classmethod
    def multilabel(
        cls, beta: float = 1.0, threshold: float = 0.5, class_reduction=ClassReduction.MICRO
    ):  # type: ignore[override]
        return super().multilabel(threshold, class_reduction, beta=beta)

    def name(self) -> str:
        return "FBetaScore" if self.beta == 1.0 else f"FBetaScore (beta={self.beta:g})"

    def _ratio(self, tp, fp, fn) -> float:
        b2 = self.beta**2
        return _reduce((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp, self.config.class_reduction)
