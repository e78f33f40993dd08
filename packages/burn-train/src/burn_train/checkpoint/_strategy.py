"""Checkpointing strategies: which epochs to save, which to delete.

`checkpointing(epoch, store) -> list[CheckpointingAction]` is called after every epoch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..metric._base import metric_name
from ..metric.store import Aggregate, Direction, Split


@dataclass(frozen=True)
class CheckpointingAction:
    """`CheckpointingAction.SAVE` (the current epoch) or `CheckpointingAction.delete(epoch)`."""

    kind: str
    epoch: int | None = None

    @classmethod
    def delete(cls, epoch: int) -> CheckpointingAction:
        return cls("delete", epoch)

    Delete = delete  # Burn's variant name

    def __repr__(self) -> str:
        return "Save" if self.kind == "save" else f"Delete({self.epoch})"


CheckpointingAction.SAVE = CheckpointingAction("save")  # type: ignore[attr-defined]
CheckpointingAction.Save = CheckpointingAction.SAVE  # type: ignore[attr-defined]


class CheckpointingStrategy:
    """Base class; subclasses implement `checkpointing(epoch, store)`."""

    def checkpointing(self, epoch: int, store: Any) -> list[CheckpointingAction]:
        raise NotImplementedError


class KeepLastNCheckpoints(CheckpointingStrategy):
    """Save every epoch, keep the last `n`.

    Example:
        >>> s = KeepLastNCheckpoints(2)
        >>> [s.checkpointing(e, None) for e in (1, 2, 3)]
        [[Save], [Save], [Save, Delete(1)]]
    """

    def __init__(self, n: int) -> None:
        if n < 1:
            raise ValueError(f"KeepLastNCheckpoints needs n >= 1, got {n}")
        self.n = n

    def checkpointing(self, epoch: int, store: Any) -> list[CheckpointingAction]:
        actions = [CheckpointingAction.SAVE]
        if epoch > self.n:
            actions.append(CheckpointingAction.delete(epoch - self.n))
        return actions


class MetricCheckpointingStrategy(CheckpointingStrategy):
    """Keep only the best epoch according to a metric's aggregate.

    Args:
        metric: a metric instance, class or name (`LossMetric()`, `"Loss"`).
        aggregate: how an epoch is summarised (`Aggregate.MEAN`).
        direction: `Direction.LOWEST` or `Direction.HIGHEST` is better.
        split: `Split.VALID` or `Split.TRAIN`.
    """

    def __init__(
        self,
        metric: Any,
        aggregate: Aggregate = Aggregate.MEAN,
        direction: Direction = Direction.LOWEST,
        split: Split = Split.VALID,
    ) -> None:
        self.name = metric_name(metric)
        self.aggregate, self.direction, self.split = aggregate, direction, split
        self.best_epoch: int | None = None

    def checkpointing(self, epoch: int, store: Any) -> list[CheckpointingAction]:
        best = store.find_epoch(
            self.name, self.aggregate, self.direction, self.split, range(1, epoch + 1)
        )
        if best != epoch:
            return []
        actions = [CheckpointingAction.SAVE]
        if self.best_epoch is not None and self.best_epoch != epoch:
            actions.append(CheckpointingAction.delete(self.best_epoch))
        self.best_epoch = epoch
        return actions


class ComposedCheckpointingStrategy(CheckpointingStrategy):
    """Union of strategies: an epoch is kept while any strategy wants it.

    Example:
        >>> s = ComposedCheckpointingStrategy([KeepLastNCheckpoints(1), KeepLastNCheckpoints(2)])
        >>> [s.checkpointing(e, None) for e in (1, 2, 3)]
        [[Save], [Save], [Save, Delete(1)]]
    """

    def __init__(self, strategies: list[CheckpointingStrategy]) -> None:
        self.strategies = list(strategies)
        self.wanted: list[set[int]] = [set() for _ in self.strategies]
        self.saved: set[int] = set()

    @classmethod
    def builder(cls) -> _ComposedBuilder:
        return _ComposedBuilder()

    def checkpointing(self, epoch: int, store: Any) -> list[CheckpointingAction]:
        for wanted, strategy in zip(self.wanted, self.strategies):
            for action in strategy.checkpointing(epoch, store):
                if action.kind == "save":
                    wanted.add(epoch)
                else:
                    wanted.discard(action.epoch)
        keep = set().union(*self.wanted) if self.wanted else set()
        actions = [CheckpointingAction.SAVE] if epoch in keep else []
        if epoch in keep:
            self.saved.add(epoch)
        for old in sorted(self.saved - keep):
            actions.append(CheckpointingAction.delete(old))
        self.saved &= keep
        return actions


class _ComposedBuilder:
    def __init__(self) -> None:
        self.strategies: list[CheckpointingStrategy] = []

    def add(self, strategy: CheckpointingStrategy) -> _ComposedBuilder:
        self.strategies.append(strategy)
        return self

    def build(self) -> ComposedCheckpointingStrategy:
        return ComposedCheckpointingStrategy(self.strategies)
