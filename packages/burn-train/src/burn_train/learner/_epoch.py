"""One training epoch and one validation epoch."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from ..metric._base import MetricMetadata
from ..metric.store import Split
from ._guard import NonFiniteLossError, check_loss, check_lr
from ._processor import MetricsProcessor
from ._train_output import GradientsAccumulator

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


def _start_epoch(loader: Any, epoch: int) -> Any:
    # Loaders that derive their shuffle order from the epoch (PyTorch's `set_epoch`) get the
    # 0-based epoch, so a resumed run sees the same order as an uninterrupted one.
    set_epoch = getattr(loader, "set_epoch", None)
    if callable(set_epoch):
        set_epoch(epoch - 1)
    return iter(loader)


def train_epoch(
    model: Any,
    optim: Any,
    scheduler: Any,
    loader: Any,
    epoch: int,
    num_epochs: int,
    processor: MetricsProcessor,
    interrupter: Any,
    grads_accumulation: int | None,
    stop_on_non_finite_loss: bool = True,
    parallel: Any = None,
) -> tuple[Any, Any]:
    """Run one epoch of `train_step` + optimizer steps; returns `(model, optim)`.

    Raises `NonFiniteLossError` (before the optimizer step) at the first NaN/inf loss or learning
    rate, unless `stop_on_non_finite_loss` is False (a warning then, for the loss).
    With `parallel` (a data-parallel driver, see `_parallel.py`) each step is its `step`.
    """
    log.info("Executing training step for epoch %d", epoch)
    if parallel is not None:
        return _train_epoch_parallel(
            parallel, scheduler, loader, epoch, num_epochs, processor, interrupter,
            stop_on_non_finite_loss,
        )  # fmt: skip
    iterator = _start_epoch(loader, epoch)
    accumulator = GradientsAccumulator() if grads_accumulation else None
    accumulated = 0
    iteration = 0
    try:
        for batch in iterator:
            iteration += 1
            lr = scheduler.step()
            check_lr(lr, epoch, iteration)
            output = model.train_step(batch)
            try:
                check_loss(output.item, epoch, iteration, stop_on_non_finite_loss)
            except NonFiniteLossError as e:
                e.model = model  # the last finite model: the bad step was not applied
                raise
            if accumulator is not None:
                accumulator.accumulate(model, output.grads)
                accumulated += 1
                if accumulated >= grads_accumulation:
                    model = _optim_step(optim, lr, model, accumulator.grads())
                    accumulated = 0
            else:
                model = _optim_step(optim, lr, model, output.grads)
            meta = MetricMetadata(
                _progress(iterator, loader, iteration), epoch, num_epochs, iteration, lr
            )
            processor.process(Split.TRAIN, output.item, meta)
            if interrupter.should_stop():
                _log_interrupt(interrupter, epoch, iteration)
                break
    finally:
        _close(iterator)
    processor.end_epoch(Split.TRAIN, epoch)
    return model, optim


def _shard_iterator(parallel: Any, loader: Any, epoch: int) -> Any:
    set_epoch = getattr(loader, "set_epoch", None)
    if callable(set_epoch):
        set_epoch(epoch - 1)
    devices = getattr(parallel, "devices", None)
    if devices is not None:  # one process, several devices
        if not callable(getattr(loader, "iter_shards", None)):
            raise TypeError(
                f"training on several devices needs a burn DataLoader (iter_shards), got "
                f"{type(loader).__name__}"
            )
        return loader.iter_shards(devices)
    return iter(loader)  # one process per device: the loader is already this rank's shard


def _train_epoch_parallel(
    parallel, scheduler, loader, epoch, num_epochs, processor, interrupter, stop_non_finite
) -> tuple[Any, Any]:
    iterator = _shard_iterator(parallel, loader, epoch)
    iteration = 0
    try:
        for shards in iterator:
            iteration += 1
            lr = scheduler.step()
            check_lr(lr, epoch, iteration)

            def check(item, iteration=iteration):
                check_loss(item, epoch, iteration, stop_non_finite)

            try:
                # Items cross processes only for training metrics (each gather waits for the
                # GPU); with none registered rank 0 renders its own item's progress.
                items = parallel.step(lr, shards, check, gather=bool(processor.train))
            except NonFiniteLossError as e:
                e.model = parallel.model
                raise
            meta = MetricMetadata(
                _progress(iterator, loader, iteration), epoch, num_epochs, iteration, lr
            )
            for item in items:
                processor.process(Split.TRAIN, item, meta)
            if _stop(parallel, interrupter):
                _log_interrupt(interrupter, epoch, iteration)
                break
    finally:
        _close(iterator)
    processor.end_epoch(Split.TRAIN, epoch)
    return parallel.model, parallel.optim


def _stop(parallel: Any, interrupter: Any) -> bool:
    """Whether to stop now: agreed by every process of a multi-process run."""
    flag = interrupter.should_stop()
    agree = getattr(parallel, "agree", None)
    if agree is None:
        return flag
    if agree(flag) and not flag:
        interrupter.stop("another rank was interrupted")
    return interrupter.should_stop()


def _log_interrupt(interrupter: Any, epoch: int, iteration: int) -> None:
    log.info(
        "Training interrupted at epoch %d iteration %d: %s",
        epoch,
        iteration,
        interrupter.get_message(),
    )


def _optim_step(optim: Any, lr: float, model: Any, grads: Any) -> Any:
    new_model = optim.step(lr, model, grads)
    if new_model is None:  # a mutating optimizer may return nothing: keep the (updated) model
        return model
    return new_model


def valid_epoch(
    model: Any,
    loader: Any,
    epoch: int,
    num_epochs: int,
    processor: MetricsProcessor,
    interrupter: Any,
) -> None:
    """Run `valid_step` over the loader on `model.valid()` (no autodiff, eval behaviour)."""
    log.info("Executing validation step for epoch %d", epoch)
    valid_model = model.valid() if callable(getattr(model, "valid", None)) else model
    iterator = _start_epoch(loader, epoch)
    iteration = 0
    try:
        for batch in iterator:
            iteration += 1
            item = valid_model.valid_step(batch)
            meta = MetricMetadata(
                _progress(iterator, loader, iteration), epoch, num_epochs, iteration, None
            )
            processor.process(Split.VALID, item, meta)
            if interrupter.should_stop():
                log.info("Validation interrupted at epoch %d iteration %d", epoch, iteration)
                break
    finally:
        _close(iterator)
    processor.end_epoch(Split.VALID, epoch)


def _close(iterator: Any) -> None:
    close = getattr(iterator, "close", None)
    if callable(close):
        close()
