"""The Noam schedule of "Attention Is All You Need" (Burn's `lr_scheduler::noam`)."""

from __future__ import annotations

from burn_nn import config

from .._ranges import check
from ._base import LrScheduler


@config
class NoamLrSchedulerConfig:
    """`factor * model_size^-0.5 * min(s^-0.5, s * warmup_steps^-1.5)` at step s = 1, 2, ...

    Linear warm-up for `warmup_steps`, then inverse square-root decay. `init()` raises ValueError
    unless `warmup_steps` and `model_size` are > 0.

    Example:
        >>> s = NoamLrSchedulerConfig(1.0).with_warmup_steps(2).with_model_size(4).init()
        >>> [round(s.step(), 4) for _ in range(3)]
        [0.1768, 0.3536, 0.2887]
    """

    factor: float
    warmup_steps: int = 4000
    model_size: int = 512

    def init(self) -> NoamLrScheduler:
        check("NoamLrSchedulerConfig", "factor", self.factor, 0.0)
        if self.warmup_steps <= 0:  # usize in Burn; negative gives a complex LR
            raise ValueError(
                "Number of steps before exponential decay starts must be greater than 0"
            )
        if self.model_size <= 0:
            raise ValueError("Model size must be greater than 0")
        return NoamLrScheduler(self.warmup_steps, self.model_size, self.factor)


class NoamLrScheduler(LrScheduler):
    """State: the step count (its record, an int)."""

    def __init__(self, warmup_steps: int, embedding_size: int, factor: float, step: int = 0):
        self.warmup_steps = float(warmup_steps)
        self.embedding_size = float(embedding_size)
        self.factor = float(factor)
        self.step_count = int(step)

    def step(self) -> float:
        self.step_count += 1
        s = float(self.step_count)
        return self.factor * self.embedding_size**-0.5 * min(s**-0.5, s * self.warmup_steps**-1.5)

    def to_record(self) -> int:
        return self.step_count

    def load_record(self, record: int) -> NoamLrScheduler:
        self.step_count = int(record)
        return self
