"""Stops training at the first NaN or infinite loss (or learning rate), naming where.

A NaN loss gives NaN gradients, and one optimizer step with them turns every parameter to NaN;
training then runs to the end and saves a model of NaNs without a word. The learner checks the
loss of every training step before the optimizer step (one read of a one-element tensor) and
raises `NonFiniteLossError` naming the epoch and iteration; `LearnerBuilder.
stop_on_non_finite_loss(False)` logs a warning and keeps going instead.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np

from ..metric._base import Adaptor, to_numpy
from ..metric._loss import LossInput

log = logging.getLogger("burn_train")


class NonFiniteLossError(FloatingPointError):
    """The training loss (or learning rate) became NaN or infinite.

    Attributes: `epoch`, `iteration` (1-based, as in the logs), `value` (the offending value),
    `model` (for a loss: the model before the step that produced it, not yet updated; else None).
    """

    def __init__(self, message: str, epoch: int, iteration: int, value: float) -> None:
        super().__init__(message)
        self.epoch, self.iteration, self.value = epoch, iteration, value
        self.model: Any = None


def loss_of(item: Any) -> Any:
    """The loss an output carries (`.loss`, or what it adapts to `LossInput`), else None."""
    loss = getattr(item, "loss", None)
    if loss is None and isinstance(item, Adaptor):
        adapted = item.adapt(LossInput)
        loss = getattr(adapted, "tensor", None)
    return loss


def check_loss(item: Any, epoch: int, iteration: int, stop: bool) -> None:
    """Raise `NonFiniteLossError` (or warn, when `stop` is False) if the step's loss is not
    finite; outputs without a loss are not checked."""
    loss = loss_of(item)
    if loss is None:
        return
    values = np.asarray(to_numpy(loss), dtype=np.float64)
    if values.size == 0 or np.isfinite(values).all():
        return
    bad = float(values[~np.isfinite(values)].reshape(-1)[0])
    where = f"epoch {epoch}, iteration {iteration}"
    if stop:
        raise NonFiniteLossError(
            f"the training loss is {bad} at {where}: stopped before the optimizer step, so the "
            "model keeps its last finite parameters. Look for a learning rate too high, a log of "
            "0 or bad inputs; LearnerBuilder.stop_on_non_finite_loss(False) keeps going instead",
            epoch,
            iteration,
            bad,
        )
    log.warning("The training loss is %s at %s (continuing, as configured)", bad, where)


def check_lr(lr: Any, epoch: int, iteration: int) -> None:
    """A scheduler's learning rate must be a finite number >= 0."""
    try:
        v = float(lr)
    except (TypeError, ValueError):
        raise TypeError(
            f"the LR scheduler returned {lr!r} at epoch {epoch}, iteration {iteration}: "
            "expected a float"
        ) from None
    if not math.isfinite(v) or v < 0:
        raise NonFiniteLossError(
            f"the LR scheduler returned a learning rate of {v} at epoch {epoch}, iteration "
            f"{iteration}: expected a finite number >= 0",
            epoch,
            iteration,
            v,
        )
