"""`ScalarMetricLogger`: the shared part of loggers that export numeric metrics to a tracker.

Each numeric entry becomes one scalar point `<split>/<name>` at a per-(split, name) step that
counts from 0 across epochs (so curves continue), and at `end_epoch` the count-weighted epoch
mean goes to `epoch/<split>/<name>` at step `epoch` (the value the file logs aggregate to). The
epoch means live under their own prefix because a key cannot be both a value and a folder in
MLflow's file store (`train/Loss` and `train/Loss/epoch` collide there).
Non-numeric entries (`N/A`) are skipped: a tracker only plots numbers.
"""

from __future__ import annotations

import re
from collections import defaultdict

from ..metric._base import MetricEntry, NumericEntry
from ..metric.store import Split
from ._metric import MetricLogger


_UNSAFE = re.compile(r"[^\w\-. ]")


def tag(name: str, split: Split) -> str:
    """The scalar tag of metric `name` in `split`: `"train/Loss"`.

    Characters MLflow rejects in a key become `_` (`"Top-1 (%)"` -> `"Top-1 ___"`); tensorboardX
    further turns spaces into `_` (`"train/Learning_Rate"`).
    """
    return f"{split.value}/{_UNSAFE.sub('_', name)}"


class ScalarMetricLogger(MetricLogger):
    """Base of `TensorBoardMetricLogger` and `MlflowMetricLogger`; subclasses write `_scalar`."""

    def __init__(self) -> None:
        self._steps: dict[str, int] = defaultdict(int)
        # (split, epoch) -> name -> [weighted sum, count]
        self._sums: dict[tuple[Split, int], dict[str, list[float]]] = defaultdict(dict)

    def _scalar(self, key: str, value: float, step: int) -> None:
        raise NotImplementedError

    def log(self, entry: MetricEntry, epoch: int, split: Split) -> None:
        num = NumericEntry.deserialize(entry.serialize)
        if num is None:
            return
        key = tag(entry.name, split)
        self._scalar(key, num.value, self._steps[key])
        self._steps[key] += 1
        acc = self._sums[(split, epoch)].setdefault(entry.name, [0.0, 0])
        acc[0] += num.value * num.count
        acc[1] += num.count

    def end_epoch(self, epoch: int, split: Split) -> None:
        for name, (total, count) in self._sums.pop((split, epoch), {}).items():
            if count:
                self._scalar(f"epoch/{tag(name, split)}", total / count, epoch)
