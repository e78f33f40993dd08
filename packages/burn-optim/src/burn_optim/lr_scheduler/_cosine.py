"""Cosine annealing with warm restarts (Burn's `lr_scheduler::cosine`)."""

from __future__ import annotations

import math

from burn_nn import config

from ._base import LrScheduler


@config
class CosineAnnealingLrSchedulerConfig:
    """`min_lr + (initial_lr - min_lr) * (1 + cos(pi * i / num_iters)) / 2`, i = 0, 1, ... .

    `i` restarts at 0 after `num_iters` (so step `num_iters + 1` gives `min_lr`, the next one
    `initial_lr` again), as in Burn. `init()` raises ValueError unless `0 < initial_lr <= 1`,
    `0 <= min_lr <= initial_lr` and `num_iters >= 1`.

    Example:
        >>> s = CosineAnnealingLrSchedulerConfig(1.0, 2).init()
        >>> [round(s.step(), 3) for _ in range(4)]
        [1.0, 0.5, 0.0, 1.0]
    """

    initial_lr: float
    min_lr: float = 0.0
    num_iters: int

    def init(self) -> CosineAnnealingLrScheduler:
        if not 0.0 < self.initial_lr <= 1.0:
            raise ValueError("Initial learning rate must be greater than 0 and at most 1")
        if not 0.0 <= self.min_lr <= self.initial_lr:
            raise ValueError(
                "Minimum learning rate must be at least 0 and at most equal to the initial learning rate"
            )
        if self.num_iters < 1:
            raise ValueError("Number of iterations must be at least 1")
        return CosineAnnealingLrScheduler(self.min_lr, self.initial_lr, self.num_iters, -1)


class CosineAnnealingLrScheduler(LrScheduler):
    """State: the current iteration index (its record; -1 before the first step).

    Burn starts at `usize::MAX` and wraps to 0; -1 is the same thing without the overflow.
    """

    def __init__(self, min_lr: float, max_lr: float, num_iters: int, current_iter: int = -1):
        self.min_lr, self.max_lr = float(min_lr), float(max_lr)
        self.num_iters, self.current_iter = int(num_iters), int(current_iter)

    def step(self) -> float:
        self.current_iter = (self.current_iter + 1) % (self.num_iters + 1)
        cos = math.cos(self.current_iter / self.num_iters * math.pi)
        return self.min_lr + 0.5 * (self.max_lr - self.min_lr) * (1.0 + cos)

    def to_record(self) -> int:
        return self.current_iter

    def load_record(self, record: int) -> CosineAnnealingLrScheduler:
        self.current_iter = int(record)
        return self
