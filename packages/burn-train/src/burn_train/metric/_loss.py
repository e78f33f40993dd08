"""`LossMetric`: the mean of the loss tensor given to backward."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._base import Metric, MetricEntry, MetricMetadata, Numeric, to_numpy
from ._state import FormatOptions, NumericMetricState


@dataclass
class LossInput:
    """Input of `LossMetric`: the loss `tensor` (any shape; its mean is reported)."""

    tensor: Any


class LossMetric(Metric, Numeric):
    """The loss used for the backward pass (Burn's `LossMetric`).

    Example:
        >>> m = LossMetric()
        >>> m.update(LossInput([0.25, 0.75]), MetricMetadata.fake()).formatted
        'epoch 0.50 - batch 0.50'
    """

    Input = LossInput

    def __init__(self) -> None:
        self.state = NumericMetricState()

    @classmethod
    def new(cls) -> LossMetric:
        return cls()

    def name(self) -> str:
        return "Loss"

    def update(self, item: LossInput, metadata: MetricMetadata) -> MetricEntry:
        loss = float(np.mean(to_numpy(item.tensor)))
        return self.state.update(loss, 1, FormatOptions(self.name()).precision(2))

    def clear(self) -> None:
        self.state.reset()

    def value(self) -> float:
        return self.state.value()
