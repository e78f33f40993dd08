"""Linear learning-rate schedule (Burn's `lr_scheduler::linear`)."""

from __future__ import annotations

from burn_nn import config

from ._base import LrScheduler


@config
class LinearLrSchedulerConfig:
    """From `initial_lr` to `final_lr` in `num_iters` equal steps, then constant at `final_lr`.

    The first `step()` returns `initial_lr`; step `num_iters + 1` returns `final_lr`.
    `init()` raises ValueError unless `0 < initial_lr <= 1`, `0 <= final_lr <= 1`, `num_iters >= 1`.

    Example:
        >>> s = LinearLrSchedulerConfig(0.9, 0.5, 4).init()
        >>> [round(s.step(), 2) for _ in range(6)]
        [0.9, 0.8, 0.7, 0.6, 0.5, 0.5]
    """

    initial_lr: float
    final_lr: float
    num_iters: int

    def init(self) -> LinearLrScheduler:
        if not 0.0 < self.initial_lr <= 1.0:
            raise ValueError("Initial learning rate must be greater than 0 and at most 1")
        if not 0.0 <= self.final_lr <= 1.0:
            raise ValueError("Final learning rate must be at least 0 and at most 1")
        if self.num_iters < 1:
            raise ValueError("Number of iterations must be at least 1")
        step_size = (self.final_lr - self.initial_lr) / self.num_iters
        return LinearLrScheduler(self.final_lr, step_size, self.num_iters + 1)


class LinearLrScheduler(LrScheduler):
    """State: the number of remaining iterations (its record, an int)."""

    def __init__(self, final_lr: float, step_size: float, remaining_iters: int):
        self.final_lr = float(final_lr)
        self.step_size = float(step_size)
        self.remaining_iters = int(remaining_iters)

    def step(self) -> float:
        if self.remaining_iters > 0:
            self.remaining_iters -= 1
        return self.final_lr - self.step_size * self.remaining_iters

    def to_record(self) -> int:
        return self.remaining_iters

    def load_record(self, record: int) -> LinearLrScheduler:
        self.remaining_iters = int(record)
        return self
