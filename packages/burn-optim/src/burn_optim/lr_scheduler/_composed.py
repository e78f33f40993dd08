"""Several schedules combined every step (Burn's `lr_scheduler::composed`)."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from burn_nn import ConfigError, config

from ._base import LrScheduler
from ._cosine import CosineAnnealingLrSchedulerConfig
from ._exponential import ExponentialLrSchedulerConfig
from ._linear import LinearLrSchedulerConfig
from ._noam import NoamLrSchedulerConfig
from ._step import StepLrSchedulerConfig

# Burn's `LrSchedulerConfig` variant names (Step is an extension: Burn's composed lacks it).
_VARIANTS: dict[str, type] = {
    "Linear": LinearLrSchedulerConfig,
    "Cosine": CosineAnnealingLrSchedulerConfig,
    "Exponential": ExponentialLrSchedulerConfig,
    "Noam": NoamLrSchedulerConfig,
    "Step": StepLrSchedulerConfig,
}


def _variant(cfg: Any) -> str:
    for name, cls in _VARIANTS.items():
        if isinstance(cfg, cls):
            return name
    raise TypeError(f"ComposedLrSchedulerConfig: unsupported scheduler config {type(cfg).__name__}")


class SchedulerReduction(enum.Enum):
    """How the composed scheduler combines the LRs of its schedulers."""

    Avg = "Avg"
    Sum = "Sum"
    Prod = "Prod"


@config
class ComposedLrSchedulerConfig:
    """Step all `schedulers` together and combine their LRs with `reduction` (default Prod).

    Build it with `.linear(cfg)`, `.cosine(cfg)`, `.exponential(cfg)`, `.noam(cfg)` (each returns
    a new config). JSON uses Burn's variant tags: `{"schedulers": [{"Linear": {...}}], ...}`.

    Example:
        >>> cfg = (ComposedLrSchedulerConfig()
        ...        .linear(LinearLrSchedulerConfig(1.0, 0.5, 1))
        ...        .exponential(ExponentialLrSchedulerConfig(0.5, 0.5)))
        >>> s = cfg.init()
        >>> [s.step() for _ in range(3)]
        [0.5, 0.125, 0.0625]
    """

    schedulers: list = dataclasses.field(default_factory=list)
    reduction: SchedulerReduction = SchedulerReduction.Prod

    def _with(self, cfg: Any) -> ComposedLrSchedulerConfig:
        _variant(cfg)
        return self.replace(schedulers=[*self.schedulers, cfg])

    def linear(self, cfg: LinearLrSchedulerConfig) -> ComposedLrSchedulerConfig:
        return self._with(cfg)

    def cosine(self, cfg: CosineAnnealingLrSchedulerConfig) -> ComposedLrSchedulerConfig:
        return self._with(cfg)

    def exponential(self, cfg: ExponentialLrSchedulerConfig) -> ComposedLrSchedulerConfig:
        return self._with(cfg)

    def noam(self, cfg: NoamLrSchedulerConfig) -> ComposedLrSchedulerConfig:
        return self._with(cfg)

    def step(self, cfg: StepLrSchedulerConfig) -> ComposedLrSchedulerConfig:
        return self._with(cfg)

    def init(self) -> ComposedLrScheduler:
        items = [(_variant(c), c.init()) for c in self.schedulers]
        return ComposedLrScheduler(items, SchedulerReduction(self.reduction))

    # Nested configs need their variant tag in JSON, which the generic codec cannot infer.
    def to_dict(self) -> dict:
        return {
            "schedulers": [{_variant(c): c.to_dict()} for c in self.schedulers],
            "reduction": SchedulerReduction(self.reduction).name,
        }

    def _to_json_value(self) -> dict:
        return self.to_dict()

    @classmethod
    def from_dict(cls, data: Any, where: str | None = None) -> ComposedLrSchedulerConfig:
        where = where or cls.__name__
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: expected a JSON object, got {data!r}")
        schedulers = []
        for i, item in enumerate(data.get("schedulers", [])):
            if not (isinstance(item, dict) and len(item) == 1 and next(iter(item)) in _VARIANTS):
                raise ConfigError(
                    f"{where}.schedulers[{i}]: expected {{variant: config}}, got {item!r}"
                )
            ((name, body),) = item.items()
            schedulers.append(_VARIANTS[name].from_dict(body, f"{where}.schedulers[{i}]"))
        reduction = data.get("reduction", "Prod")
        if reduction not in SchedulerReduction.__members__:
            raise ConfigError(f"{where}.reduction: expected Avg, Sum or Prod, got {reduction!r}")
        return cls(schedulers=schedulers, reduction=SchedulerReduction[reduction])

    @classmethod
    def _from_json_value(cls, value: Any, where: str) -> ComposedLrSchedulerConfig:
        return cls.from_dict(value, where)


class ComposedLrScheduler(LrScheduler):
    """Record: `{"schedulers": [{variant: record}, ...]}` (Burn's `ComposedLrSchedulerRecord`)."""

    def __init__(self, schedulers: list[tuple[str, LrScheduler]], reduction: SchedulerReduction):
        self.schedulers = list(schedulers)
        self.reduction = reduction

    def step(self) -> float:
        n = len(self.schedulers)
        out = 1.0 if self.reduction is SchedulerReduction.Prod else 0.0
        for _, s in self.schedulers:
            lr = s.step()
            if self.reduction is SchedulerReduction.Avg:
                out += lr / n
            elif self.reduction is SchedulerReduction.Sum:
                out += lr
            else:
                out *= lr
        return out

    def to_record(self) -> dict:
        return {"schedulers": [{name: s.to_record()} for name, s in self.schedulers]}

    def load_record(self, record: dict) -> ComposedLrScheduler:
        recs = record["schedulers"]
        if len(recs) != len(self.schedulers):
            raise ValueError(
                f"ComposedLrScheduler: record has {len(recs)} scheduler(s), "
                f"this scheduler {len(self.schedulers)}"
            )
        for (name, s), rec in zip(self.schedulers, recs):
            if list(rec) != [name]:
                raise ValueError(f"ComposedLrScheduler: record {list(rec)} does not match {name}")
            s.load_record(rec[name])
        return self
