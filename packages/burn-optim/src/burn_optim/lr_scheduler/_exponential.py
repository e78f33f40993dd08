"""Exponential decay (Burn's `lr_scheduler::exponential`)."""

from __future__ import annotations

from burn_nn import config

from ._base import LrScheduler


@config
class ExponentialLrSchedulerConfig:
    """`initial_lr * gamma^i` for i = 0, 1, ... (the LR is multiplied by `gamma` every step).

    `init()` raises ValueError unless `0 < initial_lr <= 1` and `0 < gamma <= 1`.

    Example:
        >>> s = ExponentialLrSchedulerConfig(0.8, 0.5).init()
        >>> [s.step() for _ in range(3)]
        [0.8, 0.4, 0.2]
    """

    initial_lr: float
    gamma: float

    def init(self) -> ExponentialLrScheduler:
        if not 0.0 < self.initial_lr <= 1.0:
            raise ValueError("Initial learning rate must be greater than 0 and at most 1")
        if not 0.0 < self.gamma <= 1.0:
            raise ValueError("Gamma must be greater than 0 and at most 1")
        # Starting one step "before" the initial LR avoids a first-step special case (as Burn).
        return ExponentialLrScheduler(self.initial_lr / self.gamma, self.gamma)


class ExponentialLrScheduler(LrScheduler):
    """State: the previous LR (its record, a float)."""

    def __init__(self, previous_lr: float, gamma: float):
        self.previous_lr, self.gamma = float(previous_lr), float(gamma)

    def step(self) -> float:
        self.previous_lr *= self.gamma
        return self.previous_lr

    def to_record(self) -> float:
        return self.previous_lr

    def load_record(self, record: float) -> ExponentialLrScheduler:
        self.previous_lr = float(record)
        return self
