"""Feeds step outputs to the registered metrics, then to the loggers and the renderer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..metric._base import MetricMetadata, adapt, is_numeric
from ..metric.store import Split
from ..renderer._base import (
    EvaluationName,
    EvaluationProgress,
    MetricsRenderer,
    MetricState,
    TrainingProgress,
)


@dataclass
class RegisteredMetric:
    metric: Any
    numeric: bool


@dataclass
class MetricsProcessor:
    """Registered metrics per split and where their entries go."""

    loggers: list[Any] = field(default_factory=list)
    renderer: MetricsRenderer = field(default_factory=MetricsRenderer)
    train: list[RegisteredMetric] = field(default_factory=list)
    valid: list[RegisteredMetric] = field(default_factory=list)
    #: the Evaluator's metrics (Split.TEST) and the name of the evaluation running
    test: list[RegisteredMetric] = field(default_factory=list)
    test_name: EvaluationName = EvaluationName("test")

    def _of(self, split: Split) -> list[RegisteredMetric]:
        return {Split.TRAIN: self.train, Split.VALID: self.valid, Split.TEST: self.test}[split]

    def register(self, split: Split, metric: Any, numeric: bool) -> None:
        if numeric and not is_numeric(metric):
            raise TypeError(
                f"{type(metric).__name__} is not numeric (no value() method): register it with "
                f"metric_{split.value}() instead of metric_{split.value}_numeric()"
            )
        if not hasattr(metric, "Input"):
            raise TypeError(
                f"{type(metric).__name__} must declare the class attribute Input (the input type, "
                f"or None when the metric needs no input)"
            )
        self._of(split).append(RegisteredMetric(metric, numeric))

    def names(self, split: Split) -> list[str]:
        return [m.metric.name() for m in self._of(split)]

    def _update(self, split: Split, state: MetricState) -> None:
        if split is Split.TEST:
            self.renderer.update_test(self.test_name, state)
        else:
            (self.renderer.update_train if split is Split.TRAIN else self.renderer.update_valid)(
                state
            )

    def process(self, split: Split, item: Any, meta: MetricMetadata) -> None:
        for reg in self._of(split):
            entry = reg.metric.update(adapt(item, reg.metric.Input), meta)
            for logger in self.loggers:
                logger.log(entry, meta.epoch, split)
            state = (
                MetricState.Numeric(entry, reg.metric.value())
                if reg.numeric
                else MetricState.Generic(entry)
            )
            self._update(split, state)
        if split is Split.TEST:
            self.renderer.render_test(EvaluationProgress(meta.progress, meta.iteration))
            return
        progress = TrainingProgress(meta.progress, meta.epoch, meta.epoch_total, meta.iteration)
        (self.renderer.render_train if split is Split.TRAIN else self.renderer.render_valid)(
            progress
        )

    def end_epoch(self, split: Split, epoch: int) -> None:
        for reg in self._of(split):
            reg.metric.clear()
        for logger in self.loggers:
            logger.end_epoch(epoch, split)
        self.renderer.end_epoch(split, epoch)
