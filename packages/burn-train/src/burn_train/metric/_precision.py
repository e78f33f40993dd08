"""Metrics of a `MixedPrecision` policy: skipped steps and the loss scale."""

from __future__ import annotations

import math
from typing import Any

from ._base import Metric, MetricEntry, MetricMetadata, Numeric
from ._state import FormatOptions, NumericMetricState


class _PolicyMetric(Metric, Numeric):
    Input = None

    def __init__(self, policy: Any) -> None:
        if not hasattr(policy, "skipped_steps") or not hasattr(policy, "scale"):
            raise TypeError(
                f"{type(self).__name__} needs a MixedPrecision policy, got {type(policy).__name__}"
            )
        self.policy = policy
        self.state = NumericMetricState()

    def _read(self) -> float:
        raise NotImplementedError

    def update(self, item: None, metadata: MetricMetadata) -> MetricEntry:
        # a value of the policy (not a mean): the latest one, as epoch and batch value
        self.state.reset()
        return self.state.update(self._read(), 1, self._format())

    def _format(self) -> FormatOptions:
        return FormatOptions(self.name()).precision(0)

    def clear(self) -> None:
        self.state.reset()

    def value(self) -> float:
        return self.state.value()


class SkippedStepsMetric(_PolicyMetric):
    """Optimizer steps skipped so far because their float16 gradients overflowed.

    Register it with the policy the Learner trains with:
    `builder.mixed_precision(mp).metric_train_numeric(SkippedStepsMetric(mp))`. The value is the
    policy's count when the step's item reaches the metrics (with `read_every(n)`, up to n
    steps later).

    Example:
        >>> from burn_optim import MixedPrecision
        >>> SkippedStepsMetric(MixedPrecision("f16")).update(None, MetricMetadata.fake()).formatted
        'epoch 0 - batch 0'
    """

    def name(self) -> str:
        return "Skipped Steps"

    def _read(self) -> float:
        return float(self.policy.skipped_steps)


class LossScaleMetric(_PolicyMetric):
    """The policy's current loss scale (NaN without a scaler, e.g. bfloat16)."""

    def name(self) -> str:
        return "Loss Scale"

    def _read(self) -> float:
        scale = self.policy.scale
        return math.nan if scale is None else float(scale)
