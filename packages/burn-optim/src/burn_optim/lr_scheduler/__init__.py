"""Learning-rate schedulers (Burn's `burn::lr_scheduler`): configs with Burn's names and defaults.

Each config's `init()` returns a scheduler with `step() -> float` (call it once before every
iteration), `to_record()` and `load_record(record)`. A plain float is a constant schedule
(`as_lr_scheduler(1e-3)` or `ConstantLr(1e-3)`).

Example:
    >>> from burn_optim.lr_scheduler import CosineAnnealingLrSchedulerConfig
    >>> sched = CosineAnnealingLrSchedulerConfig(1e-2, 100).init()
    >>> sched.step()
    0.01
"""

from ._base import ConstantLr, LrScheduler, as_lr_scheduler
from ._composed import ComposedLrScheduler, ComposedLrSchedulerConfig, SchedulerReduction
from ._cosine import CosineAnnealingLrScheduler, CosineAnnealingLrSchedulerConfig
from ._exponential import ExponentialLrScheduler, ExponentialLrSchedulerConfig
from ._linear import LinearLrScheduler, LinearLrSchedulerConfig
from ._noam import NoamLrScheduler, NoamLrSchedulerConfig
from ._step import StepLrScheduler, StepLrSchedulerConfig

__all__ = [
    "ComposedLrScheduler",
    "ComposedLrSchedulerConfig",
    "ConstantLr",
    "CosineAnnealingLrScheduler",
    "CosineAnnealingLrSchedulerConfig",
    "ExponentialLrScheduler",
    "ExponentialLrSchedulerConfig",
    "LinearLrScheduler",
    "LinearLrSchedulerConfig",
    "LrScheduler",
    "NoamLrScheduler",
    "NoamLrSchedulerConfig",
    "SchedulerReduction",
    "StepLrScheduler",
    "StepLrSchedulerConfig",
    "as_lr_scheduler",
]
