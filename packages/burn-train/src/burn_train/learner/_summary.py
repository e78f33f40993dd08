"""`LearnerSummary`: per-metric min/max over epochs, read back from the metric log files."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from ..logger._metric import FileMetricLogger
from ..metric.store import Aggregate, EventStore, Split


@dataclass(frozen=True)
class MetricSummary:
    """Epoch means of one metric: `entries` is a list of `(epoch, value)`."""

    name: str
    entries: list[tuple[int, float]]


class LearnerSummary:
    """Summary table of a training run, built from `<directory>/{train,valid}/epoch-N/*.log`.

    Args:
        directory: the artifact directory.
        metrics: metric names to include (None: every metric that has log files).

    Example:
        >>> import tempfile
        >>> from burn_train.metric import MetricEntry
        >>> d = tempfile.mkdtemp()
        >>> log = FileMetricLogger(d)
        >>> for epoch, v in [(1, "0.9,1"), (2, "0.4,1")]:
        ...     log.log(MetricEntry("Loss", "", v), epoch, Split.TRAIN); log.end_epoch(epoch, Split.TRAIN)
        >>> s = LearnerSummary(d)
        >>> s.epochs, s.train[0].entries
        (2, [(1, 0.9), (2, 0.4)])
    """

    def __init__(self, directory: str | os.PathLike, metrics: list[str] | None = None) -> None:
        directory = Path(directory)
        if not directory.exists():
            raise FileNotFoundError(f"artifact directory does not exist: {directory}")
        logger = FileMetricLogger(directory)
        store = EventStore([logger])
        self.epochs = max(logger.epochs(Split.TRAIN), logger.epochs(Split.VALID))

        def collect(split: Split) -> list[MetricSummary]:
            names = metrics if metrics is not None else logger.metric_names(split)
            out = []
            for name in names:
                entries = [
                    (epoch, v)
                    for epoch in range(1, self.epochs + 1)
                    if (v := store.find_metric(name, epoch, Aggregate.MEAN, split)) is not None
                ]
                out.append(MetricSummary(name, entries))
            return out

        self.train = collect(Split.TRAIN)
        self.valid = collect(Split.VALID)

    def __str__(self) -> str:
        rows = [("Train", m) for m in self.train] + [("Valid", m) for m in self.valid]
        width = max([len("Metric")] + [len(m.name) for _, m in rows])
        lines = [
            f"{'=' * 24} Learner Summary {'=' * 24}",
            f"Total Epochs: {self.epochs}",
            "",
            "",
            f"| Split | {'Metric':<{width}} | Min.     | Epoch    | Max.     | Epoch    |",
            f"|-------|-{'-' * width}-|----------|----------|----------|----------|",
        ]
        for split, m in rows:
            if not m.entries:
                continue
            key = lambda e: (math.isnan(e[1]), e[1])  # noqa: E731 - NaN sorts last, as in Burn
            lo = min(m.entries, key=key)
            hi = max(m.entries, key=lambda e: (not math.isnan(e[1]), e[1]))
            lines.append(
                f"| {split:<5} | {m.name:<{width}} | {lo[1]:<9.3f}| {lo[0]:<9}| {hi[1]:<9.3f}| {hi[0]:<9}|"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"LearnerSummary(epochs={self.epochs}, train={len(self.train)}, valid={len(self.valid)})"
