"""The renderer protocol: `MetricsRenderer`, `MetricState`, `TrainingProgress`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..metric._base import MetricEntry


@dataclass(frozen=True)
class MetricState:
    """One metric update for display: the entry, and its numeric value when plottable."""

    entry: MetricEntry
    value: float | None = None

    @property
    def numeric(self) -> bool:
        return self.value is not None

    @classmethod
    def Generic(cls, entry: MetricEntry) -> MetricState:  # noqa: N802 - Burn's variant
        return cls(entry, None)

    @classmethod
    def Numeric(cls, entry: MetricEntry, value: float) -> MetricState:  # noqa: N802
        return cls(entry, float(value) if value is not None else math.nan)


@dataclass(frozen=True)
class TrainingProgress:
    """Where the loop is: items of this epoch, 1-based epoch and iteration."""

    progress: Any  # .items_processed / .items_total
    epoch: int
    epoch_total: int
    iteration: int


@dataclass(frozen=True)
class EvaluationName:
    """The name of one `Evaluator.eval` run (Burn's `EvaluationName`), shown with its metrics."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class EvaluationProgress:
    """Where an evaluation is: items of the test set, 1-based iteration."""

    progress: Any  # .items_processed / .items_total
    iteration: int


class MetricsRenderer:
    """What the learner calls to show training (Burn's `MetricsRenderer`).

    `update_train/update_valid(state)` per metric per iteration, `render_train/render_valid
    (progress)` once per iteration after the metrics; `start(interrupter)` before the first
    epoch, `end_epoch(split, epoch)` when a loop ends, `on_train_end(summary)` and `close()`.
    The `Evaluator` calls `update_test(name, state)`, `render_test(progress)` and
    `on_test_end()` (Burn's `MetricsRendererEvaluation`).
    """

    def start(self, interrupter: Any) -> None:
        pass

    def update_train(self, state: MetricState) -> None:
        pass

    def update_valid(self, state: MetricState) -> None:
        pass

    def render_train(self, item: TrainingProgress) -> None:
        pass

    def render_valid(self, item: TrainingProgress) -> None:
        pass

    def end_epoch(self, split: Any, epoch: int) -> None:
        pass

    def on_train_end(self, summary: Any = None) -> None:
        pass

    def update_test(self, name: EvaluationName, state: MetricState) -> None:
        pass

    def render_test(self, item: EvaluationProgress) -> None:
        pass

    def on_test_end(self) -> None:
        pass

    def close(self) -> None:
        pass
