"""Metrics fed by the learner itself: `LearningRateMetric`, `IterationSpeedMetric`."""

from __future__ import annotations

import math
import time

from ._base import Metric, MetricEntry, MetricMetadata, Numeric
from ._state import FormatOptions, NumericMetricState, not_available


class LearningRateMetric(Metric, Numeric):
    """The learning rate of each optimizer step (from `MetricMetadata.lr`).

    Example:
        >>> from dataclasses import replace
        >>> m = LearningRateMetric()
        >>> m.update(None, replace(MetricMetadata.fake(), lr=1e-4)).formatted
        'epoch 1.00e-04 - batch 1.00e-04'
    """

    Input = None

    def __init__(self) -> None:
        self.state = NumericMetricState()

    @classmethod
    def new(cls) -> LearningRateMetric:
        return cls()

    def name(self) -> str:
        return "Learning Rate"

    def update(self, item: None, metadata: MetricMetadata) -> MetricEntry:
        if metadata.lr is None:
            self.state.current = math.nan
            return not_available(self.name())
        fmt = FormatOptions(self.name()).precision(2).exponent()
        return self.state.update(float(metadata.lr), 1, fmt)

    def clear(self) -> None:
        self.state.reset()

    def value(self) -> float:
        return self.state.value()


class IterationSpeedMetric(Metric, Numeric):
    """Iterations per second since the first update of the epoch.

    Args:
        clock: time source in seconds, for updates whose metadata has no `time` (tests inject a
            fake clock).

    Example:
        >>> t = iter([0.0, 0.5, 1.0])
        >>> m = IterationSpeedMetric(clock=lambda: next(t))
        >>> _ = m.update(None, MetricMetadata.fake()); _ = m.update(None, MetricMetadata.fake())
        >>> m.value()
        2.0
    """

    Input = None

    def __init__(self, clock=time.perf_counter) -> None:
        self.clock = clock
        self.state = NumericMetricState()
        self.start: float | None = None
        self.iterations = 0

    @classmethod
    def new(cls) -> IterationSpeedMetric:
        return cls()

    def name(self) -> str:
        return "Iteration Speed"

    def update(self, item: None, metadata: MetricMetadata) -> MetricEntry:
        # when the step ran, not when its values were read back (a batch of steps arrives at once)
        now = metadata.time if metadata.time is not None else self.clock()
        if self.start is None:
            self.start = now
        self.iterations += 1
        elapsed = now - self.start
        # The first update has no interval to measure yet: report 0 rather than infinity.
        speed = (self.iterations - 1) / elapsed if elapsed > 0 else 0.0
        fmt = FormatOptions(self.name()).unit("iter/sec").precision(2)
        self.state.current, self.state.current_count = speed, 1
        self.state.sum, self.state.count = speed, 1  # the running value is the latest rate
        return self.state.entry(fmt)

    def clear(self) -> None:
        self.state.reset()
        self.start = None
        self.iterations = 0

    def value(self) -> float:
        return self.state.value()
