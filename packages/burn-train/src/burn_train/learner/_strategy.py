"""How one training step runs: the `Strategy` protocol and its single-device implementation.

The Learner's `TrainLoop` is written once against `Strategy`; what differs between one device,
several devices of one process (`ThreadedDataParallel`) and one process per device
(`ProcessDataParallel`, both in `_parallel.py`) is only how a batch is split and stepped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol

from burn_optim import GradientsAccumulator

from ._protocols import Optimizer, TrainStep
from ._steptimes import StepTimes, forward_mark, lap

#: called with a step's metric item before the optimizer step; raises on a non-finite loss
LossCheck = Callable[[Any], None]


class Strategy(Protocol):
    """One training step on the current batch, wherever the model lives."""

    #: True when the loss must be checked before the optimizer step of the same step (the
    #: ranks of a data-parallel step must all stop before their collective update)
    needs_eager_check: bool
    #: this process's rank in a multi-process run, else None
    rank: int | None

    @property
    def model(self) -> Any: ...  # the model that is validated, checkpointed and returned

    @property
    def optim(self) -> Any: ...

    def batches(self, loader: Any, epoch: int) -> Iterator[Any]: ...

    def step(self, lr: float, batch: Any, check: LossCheck | None) -> list[Any]: ...

    def agree(self, flag: bool) -> bool: ...

    def barrier(self) -> None: ...


def start_epoch(loader: Any, epoch: int) -> Iterator[Any]:
    """`iter(loader)` after `set_epoch(epoch - 1)` when the loader has it."""
    # Loaders that derive their shuffle order from the epoch (PyTorch's `set_epoch`) get the
    # 0-based epoch, so a resumed run sees the same order as an uninterrupted one.
    set_epoch = getattr(loader, "set_epoch", None)
    if callable(set_epoch):
        set_epoch(epoch - 1)
    return iter(loader)


def optim_step(optim: Optimizer, lr: float, model: Any, grads: Any) -> Any:
    """`optim.step`, keeping `model` when a mutating optimizer returns nothing."""
    new_model = optim.step(lr, model, grads)
    return model if new_model is None else new_model


class SingleDevice:
    """The model and optimizer on one device; with `grads_accumulation` n > 1 the gradients of
    n steps are summed (burn_optim's `GradientsAccumulator`) before each optimizer step."""

    needs_eager_check = False
    rank = None
    times: StepTimes | None = None  # the step's phases (set by the loop when timing is on)

    def __init__(
        self,
        model: TrainStep,
        optim: Optimizer,
        grads_accumulation: int | None,
        precision: Any = None,
    ):
        self.model, self.optim = model, optim
        # a `MixedPrecision`: train_step under its autocast, the optimizer step through it
        self.precision = precision
        self.every = grads_accumulation or 1
        self.accumulator = GradientsAccumulator() if self.every > 1 else None
        self.accumulated = 0

    def batches(self, loader: Any, epoch: int) -> Iterator[Any]:
        if self.accumulator is not None:  # an epoch's leftover steps are not carried over
            self.accumulator, self.accumulated = GradientsAccumulator(), 0
        return start_epoch(loader, epoch)

    def _apply(self, lr: float, grads: Any) -> Any:
        if self.precision is None:
            return optim_step(self.optim, lr, self.model, grads)
        # accumulated gradients share one loss scale: the scale changes only here
        return self.precision.step(self.optim, lr, self.model, grads)

    def _train_step(self, batch: Any) -> Any:
        if self.precision is None:
            return self.model.train_step(batch)
        with self.precision.autocast():
            return self.model.train_step(batch)

    def step(self, lr: float, batch: Any, check: LossCheck | None) -> list[Any]:
        times = self.times
        if times is None:
            output = self._train_step(batch)
        else:
            from ._parallel import _trainable

            with forward_mark(times, _trainable(self.model)):
                output = self._train_step(batch)
            times.lap("backward")
        if check is not None:
            check(output.item)
            lap(times, "loss_check")
        if self.accumulator is None:
            self.model = self._apply(lr, output.grads)
            lap(times, "optimizer")
            return [output.item]
        self.accumulator.accumulate(self.model, output.grads)
        self.accumulated += 1
        if self.accumulated >= self.every:
            self.model = self._apply(lr, self.accumulator.grads())
            self.accumulated = 0
        lap(times, "optimizer")
        return [output.item]

    def agree(self, flag: bool) -> bool:
        return flag

    def barrier(self) -> None:
        pass
