"""Early stopping: stop when a metric has not improved for N epochs."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

from ..metric._base import metric_name
from ..metric.store import Aggregate, Direction, Split

log = logging.getLogger("burn_train")


@dataclass(frozen=True)
class StoppingCondition:
    """`StoppingCondition.no_improvement_since(n_epochs)` (Burn's `NoImprovementSince`)."""

    n_epochs: int

    @classmethod
    def no_improvement_since(cls, n_epochs: int) -> StoppingCondition:
        if n_epochs < 1:
            raise ValueError(f"n_epochs must be >= 1, got {n_epochs}")
        return cls(n_epochs)

    NoImprovementSince = no_improvement_since


class EarlyStoppingStrategy:
    """Base class: `should_stop(epoch, store) -> bool`, called after each epoch."""

    def should_stop(self, epoch: int, store: Any) -> bool:
        raise NotImplementedError


class MetricEarlyStoppingStrategy(EarlyStoppingStrategy):
    """Stop when `metric` (aggregated per epoch) has not improved for `condition.n_epochs`.

    Args:
        metric: metric instance, class or name.
        aggregate, direction, split: which value and which way is better.
        condition: `StoppingCondition.no_improvement_since(n)`.

    Example:
        >>> class Store:
        ...     values = {1: 1.0, 2: 0.5, 3: 0.6, 4: 0.7}
        ...     def find_metric(self, name, epoch, how, split): return self.values[epoch]
        >>> s = MetricEarlyStoppingStrategy("Loss", Aggregate.MEAN, Direction.LOWEST, Split.VALID,
        ...                                 StoppingCondition.no_improvement_since(2))
        >>> [s.should_stop(e, Store()) for e in (1, 2, 3, 4)]
        [False, False, False, True]
    """

    def __init__(
        self,
        metric: Any,
        aggregate: Aggregate = Aggregate.MEAN,
        direction: Direction = Direction.LOWEST,
        split: Split = Split.VALID,
        condition: StoppingCondition = StoppingCondition(1),
    ) -> None:
        self.name = metric_name(metric)
        self.aggregate, self.direction, self.split = aggregate, direction, split
        self.condition = condition
        self.warmup_epochs = 0
        self.best_epoch = 1
        self.best_value = math.nan

    def with_warmup_epochs(self, epochs: int) -> MetricEarlyStoppingStrategy:
        """Never stop during the first `epochs` epochs."""
        self.warmup_epochs = int(epochs)
        return self

    def should_stop(self, epoch: int, store: Any) -> bool:
        value = store.find_metric(self.name, epoch, self.aggregate, self.split)
        if value is None:
            log.warning(
                "early stopping: no %s value for %s epoch %d", self.name, self.split.value, epoch
            )
            return False
        if self.direction.better(value, self.best_value):
            self.best_value, self.best_epoch = value, epoch
        if epoch <= self.warmup_epochs:
            return False
        stop = epoch - self.best_epoch >= self.condition.n_epochs
        if stop:
            log.info(
                "early stopping at epoch %d: %s has not improved since epoch %d (best %s)",
                epoch,
                self.name,
                self.best_epoch,
                self.best_value,
            )
        return stop

    def restore(self, epochs: range, store: Any) -> None:
        """Replay logged epochs (resume) so the best value survives a restart."""
        for epoch in epochs:
            value = store.find_metric(self.name, epoch, self.aggregate, self.split)
            if value is not None and self.direction.better(value, self.best_value):
                self.best_value, self.best_epoch = value, epoch
