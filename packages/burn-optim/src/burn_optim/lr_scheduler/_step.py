"""Step decay (Burn's `lr_scheduler::step`)."""

from __future__ import annotations

import logging

from burn_nn import config

from .._ranges import check
from ._base import LrScheduler

log = logging.getLogger("burn_optim")


@config
class StepLrSchedulerConfig:
    """`initial_lr * gamma^(i // step_size)` for i = 0, 1, ... (PyTorch's `StepLR`).

    `init()` raises ValueError unless `step_size` > 0; like Burn, an unusual `initial_lr` (<= 0) or
    `gamma` (outside (0, 1)) only logs a warning.

    Example:
        >>> s = StepLrSchedulerConfig(1.0, 2).with_gamma(0.5).init()
        >>> [s.step() for _ in range(5)]
        [1.0, 1.0, 0.5, 0.5, 0.25]
    """

    initial_lr: float
    step_size: int
    gamma: float = 0.1

    def init(self) -> StepLrScheduler:
        # Burn only warns about unusual values; NaN and infinities are refused outright.
        check("StepLrSchedulerConfig", "initial_lr", self.initial_lr)
        check("StepLrSchedulerConfig", "gamma", self.gamma)
        if self.step_size <= 0:  # usize in Burn; negative would grow the LR
            raise ValueError("Step size must be greater than 0")
        if self.initial_lr <= 0.0:
            log.warning(
                "Initial learning rate value of %s is not a positive number. Ignore this "
                "warning if it is intended.",
                self.initial_lr,
            )
        if self.gamma <= 0.0 or self.gamma >= 1.0:
            log.warning(
                "Gamma value of %s is out of range (0.0, 1.0). Ignore this warning if it "
                "is intended.",
                self.gamma,
            )
        return StepLrScheduler(self.initial_lr, self.step_size, self.gamma, -1)


class StepLrScheduler(LrScheduler):
    """State: the current iteration index (its record; -1 before the first step)."""

    def __init__(self, init_lr: float, step_size: int, gamma: float, iter_idx: int = -1):
        self.init_lr, self.step_size, self.gamma = float(init_lr), int(step_size), float(gamma)
        self.iter_idx = int(iter_idx)

    def step(self) -> float:
        self.iter_idx += 1
        return self.init_lr * self.gamma ** (self.iter_idx // self.step_size)

    def to_record(self) -> int:
        return self.iter_idx

    def load_record(self, record: int) -> StepLrScheduler:
        self.iter_idx = int(record)
        return self
