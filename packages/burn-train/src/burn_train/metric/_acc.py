"""`AccuracyMetric` (with an optional pad token) and `TopKAccuracyMetric`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._base import Metric, MetricEntry, MetricMetadata, Numeric, to_numpy
from ._state import FormatOptions, NumericMetricState


@dataclass
class AccuracyInput:
    """Input of `AccuracyMetric`: `outputs` `[batch, n_classes]` scores, `targets` `[batch]` ints."""

    outputs: Any
    targets: Any


@dataclass
class TopKAccuracyInput:
    """Input of `TopKAccuracyMetric`: `outputs` `[batch, n_classes]`, `targets` `[batch]`."""

    outputs: Any
    targets: Any


def _masked_rate(hits: np.ndarray, targets: np.ndarray, pad_token: int | None) -> tuple[float, int]:
    """Fraction of hits ignoring padded targets, and the number of counted items."""
    keep = np.ones_like(hits, dtype=bool) if pad_token is None else targets != pad_token
    n = int(keep.sum())
    return (float(hits[keep].sum()) / n if n else 0.0), n


class AccuracyMetric(Metric, Numeric):
    """Percentage of rows whose argmax equals the target (Burn's `AccuracyMetric`).

    Targets equal to the pad token (`with_pad_token`) are ignored: they count neither as hits
    nor in the batch size.

    Example:
        >>> m = AccuracyMetric()
        >>> e = m.update(AccuracyInput([[0.1, 0.9], [0.8, 0.2]], [1, 1]), MetricMetadata.fake())
        >>> m.value(), e.formatted
        (50.0, 'epoch 50.00 % - batch 50.00 %')
    """

    Input = AccuracyInput

    def __init__(self, pad_token: int | None = None) -> None:
        self.state = NumericMetricState()
        self.pad_token = pad_token

    @classmethod
    def new(cls) -> AccuracyMetric:
        return cls()

    def with_pad_token(self, index: int) -> AccuracyMetric:
        self.pad_token = int(index)
        return self

    def name(self) -> str:
        return "Accuracy"

    def update(self, item: AccuracyInput, metadata: MetricMetadata) -> MetricEntry:
        outputs, targets = to_numpy(item.outputs), to_numpy(item.targets).reshape(-1)
        hits = outputs.argmax(axis=1) == targets
        rate, n = _masked_rate(hits, targets, self.pad_token)
        return self.state.update(100.0 * rate, n, FormatOptions(self.name()).unit("%").precision(2))

    def clear(self) -> None:
        self.state.reset()

    def value(self) -> float:
        return self.state.value()


class TopKAccuracyMetric(Metric, Numeric):
    """Percentage of rows whose target is among the `k` highest scores.

    Example:
        >>> m = TopKAccuracyMetric(2)
        >>> _ = m.update(TopKAccuracyInput([[0.5, 0.3, 0.2], [0.5, 0.3, 0.2]], [1, 2]),
        ...              MetricMetadata.fake())
        >>> m.value()
        50.0
    """

    Input = TopKAccuracyInput

    def __init__(self, k: int, pad_token: int | None = None) -> None:
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        self.k = int(k)
        self.pad_token = pad_token
        self.state = NumericMetricState()

    @classmethod
    def new(cls, k: int) -> TopKAccuracyMetric:
        return cls(k)

    def with_pad_token(self, index: int) -> TopKAccuracyMetric:
        self.pad_token = int(index)
        return self

    def name(self) -> str:
        return f"Top-{self.k} Accuracy"

    def update(self, item: TopKAccuracyInput, metadata: MetricMetadata) -> MetricEntry:
        outputs, targets = to_numpy(item.outputs), to_numpy(item.targets).reshape(-1)
        # A stable descending sort keeps the first of tied scores, as a top-k would.
        top = np.argsort(-outputs, axis=1, kind="stable")[:, : self.k]
        hits = (top == targets[:, None]).any(axis=1)
        rate, n = _masked_rate(hits, targets, self.pad_token)
        return self.state.update(100.0 * rate, n, FormatOptions(self.name()).unit("%").precision(2))

    def clear(self) -> None:
        self.state.reset()

    def value(self) -> float:
        return self.state.value()
