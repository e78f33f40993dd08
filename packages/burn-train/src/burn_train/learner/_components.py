"""What a custom training strategy works with (Burn 0.20's `TrainingComponents` and events).

`SupervisedTraining.launch` hands a `SupervisedLearningStrategy` the run's components: the
metrics processor wrapped as `EventProcessorTraining` (`process_train(LearnerEvent...)`), the
checkpointer, the interrupter, the event store. They are the objects the built-in loop uses
(`TrainLoop`, `LearnerCheckpointer`, `MetricsProcessor`), seen through Burn's 0.20 names.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..metric._base import MetricMetadata
from ..metric.store import Split
from ._loop import Progress
from ._processor import MetricsProcessor


@dataclass
class LearnerItem:
    """One processed step (Burn's `LearnerItem::new(item, progress, epoch, epoch_total,
    iteration, lr)`): the step output and where the loop is."""

    item: Any
    progress: Any
    epoch: int
    epoch_total: int
    iteration: int
    lr: float | None = None

    @classmethod
    def new(cls, item, progress, epoch, epoch_total, iteration, lr=None) -> LearnerItem:  # noqa: ANN001
        return cls(item, progress, epoch, epoch_total, iteration, lr)


@dataclass(frozen=True)
class LearnerEvent:
    """Burn's `LearnerEvent`: `Start`, `ProcessedItem(item)`, `EndEpoch(epoch)`, `End(summary)`."""

    kind: str
    value: Any = None

    @classmethod
    def Start(cls) -> LearnerEvent:  # noqa: N802 - Burn's variant names
        return cls("start")

    @classmethod
    def ProcessedItem(cls, item: LearnerItem) -> LearnerEvent:  # noqa: N802
        if not isinstance(item, LearnerItem):
            raise TypeError(f"ProcessedItem expects a LearnerItem, got {type(item).__name__}")
        return cls("item", item)

    @classmethod
    def EndEpoch(cls, epoch: int) -> LearnerEvent:  # noqa: N802
        return cls("end_epoch", int(epoch))

    @classmethod
    def End(cls, summary: Any = None) -> LearnerEvent:  # noqa: N802
        return cls("end", summary)


def _progress(item: LearnerItem) -> Any:
    p = item.progress
    if p is None:  # a strategy over a plain iterable: count the iterations
        return Progress(item.iteration, item.iteration)
    if isinstance(p, tuple):
        return Progress(*p)
    return p


class EventProcessorTraining:
    """Turns a custom strategy's `LearnerEvent`s into metric updates, log lines and renderer
    calls, through the run's `MetricsProcessor` (the built-in loop's own).

    `Start` and `End` are sent by `SupervisedTraining.launch` around the strategy's `fit`; a
    strategy sends `ProcessedItem` per step and `EndEpoch` per loop, for train and valid.
    """

    def __init__(self, processor: MetricsProcessor) -> None:
        self.processor = processor
        #: the last epoch whose validation loop ended (the Learner's `epochs_completed`)
        self.last_valid_epoch: int | None = None

    def _process(self, split: Split, event: LearnerEvent) -> None:
        if not isinstance(event, LearnerEvent):
            raise TypeError(f"expected a LearnerEvent, got {type(event).__name__}")
        if event.kind == "item":
            item = event.value
            meta = MetricMetadata(
                _progress(item), item.epoch, item.epoch_total, item.iteration, item.lr,
                time.perf_counter(),
            )  # fmt: skip
            self.processor.process(split, item.item, meta)
        elif event.kind == "end_epoch":
            self.processor.end_epoch(split, event.value)
            if split is Split.VALID:
                self.last_valid_epoch = event.value
        # start/end: the renderer is started and closed by the Learner around the strategy

    def process_train(self, event: LearnerEvent) -> None:
        self._process(Split.TRAIN, event)

    def process_valid(self, event: LearnerEvent) -> None:
        self._process(Split.VALID, event)

    def renderer(self) -> Any:
        return self.processor.renderer


class LearningCheckpointer:
    """Burn's `LearningCheckpointer`: `checkpoint(learner, epoch, store)` saves the learner's
    model, optimizer and scheduler as the run's checkpointing strategy says."""

    def __init__(self, checkpointer: Any) -> None:
        self.inner = checkpointer  # the built-in loop's LearnerCheckpointer

    def checkpoint(self, learner: Any, epoch: int, store: Any) -> None:
        self.inner.checkpoint(learner.model, learner.optim, learner.scheduler, epoch, store)


@dataclass
class TrainingComponents:
    """Everything of the run besides the learner and the loaders (Burn's
    `TrainingComponents`). `checkpoint` is the epoch resumed from (None: a fresh start); the
    Learner has already loaded it, so a strategy starts at `starting_epoch`."""

    num_epochs: int
    checkpoint: int | None
    checkpointer: LearningCheckpointer | None
    grad_accumulation: int | None
    interrupter: Any
    early_stopping: Any
    event_processor: EventProcessorTraining
    event_store: Any
    summary: bool


@dataclass
class LearningResult:
    """What `SupervisedTraining.launch` returns (Burn's `LearningResult`).

    Attributes:
        model: the trained model, `valid()` (the inference model, no autodiff).
        renderer: the run's renderer, for a follow-up `EvaluatorBuilder(...).renderer(r)`.
        learner: the Learner after the run (burn-py: `epochs_completed`, `interrupted`,
            `stopped_early`, `summary_result`, the training model, optimizer and scheduler).
    """

    model: Any
    renderer: Any
    learner: Any = None
