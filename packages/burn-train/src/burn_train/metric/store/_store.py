"""`Aggregate`, `Direction`, `Split` and the `EventStore` answering "what was metric X at epoch N".

The store reads epochs back from the metric loggers, so checkpoint strategies and early stopping
also see epochs logged before a resumed run started.
"""

from __future__ import annotations

import enum
import math
from typing import Any


class Split(enum.Enum):
    """Which loop produced a metric."""

    TRAIN = "train"
    VALID = "valid"
    #: the Evaluator's split (logs under `<directory>/test/<name>/`)
    TEST = "test"
    Train = TRAIN  # Burn's spelling
    Valid = VALID
    Test = TEST


class Aggregate(enum.Enum):
    """How an epoch's per-iteration values become one number (count-weighted mean)."""

    MEAN = "mean"
    Mean = MEAN


class Direction(enum.Enum):
    """Whether lower or higher values of a metric are better."""

    LOWEST = "lowest"
    HIGHEST = "highest"
    Lowest = LOWEST
    Highest = HIGHEST

    def better(self, a: float, b: float) -> bool:
        """Is `a` strictly better than `b` (NaN is never better)."""
        if math.isnan(a):
            return False
        if math.isnan(b):
            return True
        return a < b if self is Direction.LOWEST else a > b


def aggregate(entries: list[Any], how: Aggregate = Aggregate.MEAN) -> float | None:
    """Count-weighted mean of `NumericEntry`s; None when there are none."""
    if not entries:
        return None
    total = sum(e.count for e in entries)
    return sum(e.value * e.count for e in entries) / total if total else None


class EventStore:
    """Epoch aggregates of numeric metrics, read from loggers that implement `read_numeric`.

    Example:
        >>> from burn_train.logger import InMemoryMetricLogger
        >>> from burn_train.metric import MetricEntry
        >>> log = InMemoryMetricLogger()
        >>> log.log(MetricEntry("Loss", "", "2.0,1"), 1, Split.VALID)
        >>> log.log(MetricEntry("Loss", "", "4.0,3"), 1, Split.VALID)
        >>> EventStore([log]).find_metric("Loss", 1, Aggregate.MEAN, Split.VALID)
        3.5
    """

    def __init__(self, loggers: list[Any]) -> None:
        self.loggers = [lg for lg in loggers if callable(getattr(lg, "read_numeric", None))]

    def find_metric(self, name: str, epoch: int, how: Aggregate, split: Split) -> float | None:
        for logger in self.loggers:
            value = aggregate(logger.read_numeric(name, epoch, split), how)
            if value is not None:
                return value
        return None

    def find_epoch(
        self, name: str, how: Aggregate, direction: Direction, split: Split, epochs: range
    ) -> int | None:
        """The epoch in `epochs` with the best aggregate (the earliest on ties)."""
        best, best_epoch = math.nan, None
        for epoch in epochs:
            value = self.find_metric(name, epoch, how, split)
            if value is not None and direction.better(value, best):
                best, best_epoch = value, epoch
        return best_epoch
