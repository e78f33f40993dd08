"""`AurocMetric` (binary) and `HammingScore` (multi-label)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._base import Metric, MetricEntry, MetricMetadata, Numeric, NumericEntry, to_numpy
from ._state import FormatOptions, NumericMetricState


@dataclass
class AurocInput:
    """Input of `AurocMetric`: `outputs` `[batch, 2]` class scores (column 1 is the positive
    class; a single column is taken as the positive score) and `targets` `[batch]` in {0, 1}."""

    outputs: Any
    targets: Any


def auroc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve by the Mann-Whitney U statistic (ties count one half).

    Returns NaN when only one class is present: the curve is undefined there.

    Example:
        >>> auroc(np.array([0.1, 0.4, 0.35, 0.8]), np.array([0, 0, 1, 1]))
        0.75
    """
    labels = labels.astype(bool)
    n_pos, n_neg = int(labels.sum()), int((~labels).sum())
    if n_pos == 0 or n_neg == 0:
        return math.nan
    # Average ranks handle ties exactly as the U statistic's one-half credit does. Vectorized:
    # the running value re-ranks every prediction of the epoch on each batch.
    order = np.argsort(scores, kind="mergesort")
    _, first, counts = np.unique(scores[order], return_index=True, return_counts=True)
    ranks = np.empty(len(scores), dtype=np.float64)
    ranks[order] = np.repeat(first + (counts - 1) / 2.0 + 1.0, counts)
    u = ranks[labels].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


class AurocMetric(Metric, Numeric):
    """Binary AUROC in percent; the epoch value is computed over all predictions seen so far.

    Example:
        >>> m = AurocMetric()
        >>> _ = m.update(AurocInput([[0.9, 0.1], [0.6, 0.4], [0.65, 0.35], [0.2, 0.8]],
        ...                         [0, 0, 1, 1]), MetricMetadata.fake())
        >>> m.value()
        75.0
    """

    Input = AurocInput

    def __init__(self) -> None:
        self.clear()

    @classmethod
    def new(cls) -> AurocMetric:
        return cls()

    def name(self) -> str:
        return "AUROC"

    def update(self, item: AurocInput, metadata: MetricMetadata) -> MetricEntry:
        outputs = np.atleast_2d(to_numpy(item.outputs).astype(np.float64))
        scores = outputs[:, 1] if outputs.shape[1] > 1 else outputs[:, 0]
        labels = to_numpy(item.targets).reshape(-1)
        self.scores.append(scores)
        self.labels.append(labels)
        self.current = 100.0 * auroc(scores, labels)
        self.running = 100.0 * auroc(np.concatenate(self.scores), np.concatenate(self.labels))
        fmt = FormatOptions(self.name()).unit("%").precision(2)
        formatted = f"epoch {fmt.format(self.running)} - batch {fmt.format(self.current)}"
        line = NumericEntry.Aggregated(self.current, len(labels)).serialize()
        return MetricEntry(self.name(), formatted, "N/A" if math.isnan(self.current) else line)

    def clear(self) -> None:
        self.scores: list[np.ndarray] = []
        self.labels: list[np.ndarray] = []
        self.current = math.nan
        self.running = math.nan

    def value(self) -> float:
        return self.current

    def running_value(self) -> float:
        return self.running


@dataclass
class HammingScoreInput:
    """Input of `HammingScore`: `outputs` `[batch, n_labels]` logits, `targets` `[batch, n_labels]`."""

    outputs: Any
    targets: Any


class HammingScore(Metric, Numeric):
    """Percentage of labels predicted right: sigmoid(logits) >= threshold vs the targets.

    Example:
        >>> m = HammingScore()
        >>> _ = m.update(HammingScoreInput([[5.0, -5.0], [5.0, 5.0]], [[1, 0], [0, 1]]),
        ...              MetricMetadata.fake())
        >>> m.value()
        75.0
    """

    Input = HammingScoreInput

    def __init__(self, threshold: float = 0.5, sigmoid: bool = True) -> None:
        self.threshold = threshold
        self.sigmoid = sigmoid
        self.state = NumericMetricState()

    @classmethod
    def new(cls) -> HammingScore:
        return cls()

    def with_threshold(self, threshold: float) -> HammingScore:
        self.threshold = threshold
        return self

    def with_sigmoid(self, sigmoid: bool) -> HammingScore:
        self.sigmoid = sigmoid
        return self

    def name(self) -> str:
        return "Hamming Score"

    def update(self, item: HammingScoreInput, metadata: MetricMetadata) -> MetricEntry:
        outputs = to_numpy(item.outputs).astype(np.float64)
        if self.sigmoid:
            outputs = 1.0 / (1.0 + np.exp(-outputs))
        targets = to_numpy(item.targets).astype(bool).reshape(outputs.shape)
        score = float(((outputs >= self.threshold) == targets).mean())
        fmt = FormatOptions(self.name()).unit("%").precision(2)
        return self.state.update(100.0 * score, outputs.shape[0], fmt)

    def clear(self) -> None:
        self.state.reset()

    def value(self) -> float:
        return self.state.value()
