"""The `LrScheduler` protocol and the constant scheduler (Burn's `lr_scheduler::{base,constant}`)."""

from __future__ import annotations

from typing import Any

from .._ranges import learning_rate


class LrScheduler:
    """A learning-rate schedule: `step()` returns the LR for the next iteration.

    The training loop calls `step()` once **before** every iteration (so the first call gives the
    initial LR). `to_record()` returns plain data (ints/floats/lists) that any `burn_record`
    recorder can write; `load_record(record)` restores it and returns the scheduler.
    Schedulers are built by their configs' `init()`, which raises `ValueError` on bad settings
    (Burn returns `Err(String)`).

    Example:
        >>> from burn_optim.lr_scheduler import LinearLrSchedulerConfig
        >>> s = LinearLrSchedulerConfig(0.1, 0.0, 2).init()
        >>> [round(s.step(), 3) for _ in range(4)]
        [0.1, 0.05, 0.0, 0.0]
    """

    def step(self) -> float:
        raise NotImplementedError

    def to_record(self) -> Any:
        raise NotImplementedError

    def load_record(self, record: Any) -> LrScheduler:
        raise NotImplementedError

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"


class ConstantLr(LrScheduler):
    """Always the same learning rate. Its record is None (Burn's `()`).

    Anywhere a scheduler is expected, a plain float works too (`as_lr_scheduler`), as Burn
    implements `LrScheduler` for `f64`.

    Example:
        >>> s = ConstantLr(1e-3)
        >>> s.step(), s.step(), s.to_record()
        (0.001, 0.001, None)
    """

    def __init__(self, lr: float):
        self.lr = learning_rate("ConstantLr", lr)

    def step(self) -> float:
        return self.lr

    def to_record(self) -> None:
        return None

    def load_record(self, record: Any) -> ConstantLr:
        return self


def as_lr_scheduler(lr_or_scheduler: Any) -> LrScheduler:
    """A float (or int) becomes a `ConstantLr`; anything with `step()` is returned as is.

    Example:
        >>> as_lr_scheduler(0.01).step()
        0.01
    """
    if isinstance(lr_or_scheduler, int | float) and not isinstance(lr_or_scheduler, bool):
        return ConstantLr(lr_or_scheduler)
    if callable(getattr(lr_or_scheduler, "step", None)):
        return lr_or_scheduler
    raise TypeError(
        f"expected a learning rate or an LR scheduler, got {type(lr_or_scheduler).__name__}"
    )
