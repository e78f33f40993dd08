"""`DiceMetric` (Burn's `metric::vision::DiceMetric`): overlap of predicted and target masks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._base import Metric, MetricEntry, MetricMetadata, Numeric, to_numpy
from ._state import FormatOptions, NumericMetricState


@dataclass
class DiceInput:
    """Input of `DiceMetric`: one-hot (0/1) Int masks `[batch, classes, ...spatial]`, equal
    shapes, rank >= 3."""

    outputs: Any
    targets: Any


@dataclass(frozen=True)
class DiceMetricConfig:
    """`epsilon` (default 1e-7) smooths empty masks; `include_background` (default False) keeps
    class 0, which is otherwise dropped when there is more than one class."""

    epsilon: float = 1e-7
    include_background: bool = False


class DiceMetric(Metric, Numeric):
    """Dice coefficient (2|A∩B| + eps) / (|A| + |B| + eps) over the whole batch (Burn's
    `DiceMetric<B, D>`, named "{D}D Dice Metric": give the masks' rank as `dims`).

    Example:
        >>> m = DiceMetric(dims=3, config=DiceMetricConfig(epsilon=0.0, include_background=True))
        >>> _ = m.update(DiceInput([[[1, 1], [0, 0]]], [[[1, 0], [0, 1]]]), MetricMetadata.fake())
        >>> round(m.value(), 4)  # [1 batch, 2 classes, 2 pixels]: intersection 1, sums 2 + 2
        0.5
    """

    Input = DiceInput

    def __init__(self, dims: int = 4, config: DiceMetricConfig | None = None) -> None:
        if dims < 3:
            raise ValueError(f"DiceMetric requires at least 3 dimensions, got {dims}")
        self.dims = int(dims)
        self.config = config or DiceMetricConfig()
        self.state = NumericMetricState()

    @classmethod
    def new(cls) -> DiceMetric:
        return cls()

    @classmethod
    def with_config(cls, config: DiceMetricConfig, dims: int = 4) -> DiceMetric:
        return cls(dims, config)

    def name(self) -> str:
        return f"{self.dims}D Dice Metric"

    def update(self, item: DiceInput, metadata: MetricMetadata) -> MetricEntry:
        outputs, targets = to_numpy(item.outputs), to_numpy(item.targets)
        if outputs.shape != targets.shape:
            raise ValueError(
                f"DiceMetric: outputs and targets must have the same shape, got "
                f"{list(outputs.shape)} and {list(targets.shape)}"
            )
        if outputs.ndim != self.dims:
            raise ValueError(
                f"{self.name()}: expected rank-{self.dims} masks, got {list(outputs.shape)}"
            )
        n_classes = outputs.shape[1]
        if not self.config.include_background and n_classes > 1:
            outputs, targets = outputs[:, 1:], targets[:, 1:]
        elif self.config.include_background and n_classes < 2:
            raise ValueError("DiceMetric needs at least 2 classes when including background")
        outputs, targets = outputs.astype(np.float64), targets.astype(np.float64)
        eps = self.config.epsilon
        dice = (2.0 * float((outputs * targets).sum()) + eps) / (
            float(outputs.sum()) + float(targets.sum()) + eps
        )
        return self.state.update(dice, len(outputs), FormatOptions(self.name()).precision(4))

    def clear(self) -> None:
        self.state.reset()

    def value(self) -> float:
        return self.state.value()

    def running_value(self) -> float:
        return self.state.running_value()
