"""`TrainLoop`: one training epoch and one validation epoch, written once for every `Strategy`.

It takes the `LearnerConfig` whole (metrics processor, interrupter, non-finite policy, reads per
batch) and a strategy (`SingleDevice`, `ThreadedDataParallel` or `ProcessDataParallel`) whose
`step()` runs one batch; the step outputs go through a `Readback`, which reads their values from
the device every `read_every` steps (see `_readback.py`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..metric._base import MetricMetadata
from ..metric.store import Split
from ._guard import NonFiniteLossError, check_loss, check_lr
from ._protocols import LrScheduler
from ._readback import Readback
from ._steptimes import StepTimes, lap
from ._strategy import Strategy, start_epoch

if TYPE_CHECKING:
    from ._builder import LearnerConfig

log = logging.getLogger("burn_train")


@dataclass(frozen=True)
class Progress:
    """Fallback progress for loaders whose iterators have no `progress()` (counts batches)."""

    items_processed: int
    items_total: int


def _progress(iterator: Any, loader: Any, iteration: int) -> Any:
    method = getattr(iterator, "progress", None)
    if callable(method):
        return method()
    try:
        total = len(loader)
    except TypeError:
        total = iteration
    return Progress(iteration, max(total, iteration))


def _close(iterator: Any) -> None:
    close = getattr(iterator, "close", None)
    if callable(close):
        close()


class TrainLoop:
    """The epochs of one `Learner.fit`: `train_epoch`, `valid_epoch`, `should_stop`.

    Args:
        config: the `LearnerConfig` of the run.
        strategy: how a step runs (one device, threads, processes); holds the model and optimizer.
        read_every: steps whose values are read back together (1: each step, before its
            optimizer step is applied).
    """

    def __init__(self, config: LearnerConfig, strategy: Strategy, read_every: int) -> None:
        self.config, self.strategy, self.read_every = config, strategy, read_every
        # the loss is checked inside the step (before its optimizer step) when values are read
        # each step, or when the strategy must (data-parallel ranks stop together)
        self.eager_check = read_every == 1 or strategy.needs_eager_check
        # the model before the first unread step: what a deferred non-finite loss reports
        self._last_checked: Any = None
        #: steps between the ranks' agreements to stop (a Ctrl-C takes effect within them)
        self.agree_every = max(1, int(getattr(strategy, "agree_every", 1)))
        #: `LearnerBuilder.step_times()`: each training step's phases (None: not timed)
        self.times: StepTimes | None = getattr(config, "step_times", None)
        if self.times is not None and hasattr(strategy, "times"):
            strategy.times = self.times  # the strategy marks the phases inside its step

    @property
    def model(self) -> Any:
        return self.strategy.model

    @property
    def optim(self) -> Any:
        return self.strategy.optim

    def should_stop(self) -> bool:
        """Whether to stop now: agreed by every process of a multi-process run."""
        interrupter = self.config.interrupter
        flag = interrupter.should_stop()
        if self.strategy.agree(flag) and not flag:
            interrupter.stop("another rank was interrupted")
        return interrupter.should_stop()

    # -- training ------------------------------------------------------------------------------
    def _check(self, item: Any, epoch: int, iteration: int, model: Any) -> None:
        try:
            check_loss(item, epoch, iteration, self.config.stop_on_non_finite_loss)
        except NonFiniteLossError as e:
            e.model = model  # a finite model: the bad step's update is not in it
            raise

    def _handle_train(self, item: Any, meta: MetricMetadata) -> None:
        if not self.eager_check:
            self._check(item, meta.epoch, meta.iteration, self._last_checked)
        self.config.processor.process(Split.TRAIN, item, meta)

    def train_epoch(self, scheduler: LrScheduler, loader: Any, epoch: int) -> None:
        """One pass of `strategy.step` over `loader`, stopping early when interrupted.

        Raises `NonFiniteLossError` at the first NaN/inf loss or learning rate (unless
        `stop_on_non_finite_loss` is off: a warning then, for the loss).
        """
        log.info("Executing training step for epoch %d", epoch)
        cfg, strategy = self.config, self.strategy
        times = self.times
        if times is not None:
            times.attach(strategy.model)
            times.begin_epoch(epoch)
        readback = Readback(self.read_every, self._handle_train)
        iterator: Iterator[Any] = strategy.batches(loader, epoch)
        iteration = 0
        try:
            for batch in iterator:
                lap(times, "data")
                iteration += 1
                lr = scheduler.step()
                check_lr(lr, epoch, iteration)
                if not readback.pending:
                    self._last_checked = strategy.model
                check = None
                if self.eager_check:

                    def check(item: Any, it: int = iteration, model: Any = strategy.model) -> None:
                        self._check(item, epoch, it, model)

                lap(times, "other")
                items = strategy.step(lr, batch, check)
                meta = MetricMetadata(
                    _progress(iterator, loader, iteration), epoch, cfg.num_epochs, iteration, lr,
                    time.perf_counter(),
                )  # fmt: skip
                for item in items:
                    readback.push(item, meta)
                lap(times, "metrics")
                # Ranks agree on stopping every `agree_every` steps (one small collective
                # each): between agreements no rank stops alone, or the others would wait
                # in the next collective. The epoch's end always agrees (`Learner._epochs`).
                stop = iteration % self.agree_every == 0 and self.should_stop()
                lap(times, "stop_check")
                if times is not None:
                    times.step_done()
                if stop:
                    readback.flush()
                    self._log_interrupt(epoch, iteration)
                    break
            else:
                readback.flush()
        finally:
            _close(iterator)
        self._last_checked = None
        lap(times, "metrics")
        cfg.processor.end_epoch(Split.TRAIN, epoch)
        if times is not None:
            times.end_epoch()

    def _log_interrupt(self, epoch: int, iteration: int) -> None:
        log.info(
            "Training interrupted at epoch %d iteration %d: %s",
            epoch,
            iteration,
            self.config.interrupter.get_message(),
        )

    # -- validation ----------------------------------------------------------------------------
    def valid_epoch(self, loader: Any, epoch: int) -> None:
        """`valid_step` over the loader on `model.valid()` (no autodiff, eval behaviour)."""
        log.info("Executing validation step for epoch %d", epoch)
        cfg = self.config
        model = self.strategy.model
        valid_model = model.valid() if callable(getattr(model, "valid", None)) else model
        readback = Readback(
            self.read_every, lambda item, meta: cfg.processor.process(Split.VALID, item, meta)
        )
        iterator = start_epoch(loader, epoch)
        iteration = 0
        try:
            for batch in iterator:
                iteration += 1
                item = valid_model.valid_step(batch)
                meta = MetricMetadata(
                    _progress(iterator, loader, iteration), epoch, cfg.num_epochs, iteration, None,
                    time.perf_counter(),
                )  # fmt: skip
                readback.push(item, meta)
                if cfg.interrupter.should_stop():
                    readback.flush()
                    log.info("Validation interrupted at epoch %d iteration %d", epoch, iteration)
                    break
            else:
                readback.flush()
        finally:
            _close(iterator)
        cfg.processor.end_epoch(Split.VALID, epoch)
