"""Metric loggers: `FileMetricLogger` (the book's artifact layout) and `InMemoryMetricLogger`.

Protocol (duck-typed): `log(entry, epoch, split)`, `end_epoch(epoch, split)`,
`read_numeric(name, epoch, split) -> list[NumericEntry]`, `close()`.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from pathlib import Path
from typing import IO

from ..metric._base import MetricEntry, NumericEntry
from ..metric.store import Split


class MetricLogger:
    """Base class of metric loggers; every split and epoch goes through one logger object."""

    def log(self, entry: MetricEntry, epoch: int, split: Split) -> None:
        raise NotImplementedError

    def end_epoch(self, epoch: int, split: Split) -> None:
        pass

    def read_numeric(self, name: str, epoch: int, split: Split) -> list[NumericEntry]:
        return []

    def close(self) -> None:
        pass


def file_name(name: str) -> str:
    """A metric name usable as a file name (path separators replaced)."""
    return re.sub(r"[/\\:\0]", "_", name)


class FileMetricLogger(MetricLogger):
    """Writes `<directory>/<split>/epoch-<N>/<Metric>.log`, one serialized value per line.

    Args:
        directory: the artifact directory.

    Example:
        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> log = FileMetricLogger(d)
        >>> log.log(MetricEntry("Loss", "epoch 0.5", "0.5,1"), 1, Split.TRAIN)
        >>> log.end_epoch(1, Split.TRAIN)
        >>> from pathlib import Path
        >>> Path(f"{d}/train/epoch-1/Loss.log").read_text()
        '0.5,1\\n'
        >>> log.read_numeric("Loss", 1, Split.TRAIN)
        [NumericEntry(value=0.5, count=1)]
    """

    def __init__(self, directory: str | os.PathLike) -> None:
        self.directory = Path(directory)
        self._files: dict[Path, IO[str]] = {}
        #: evaluation logger (`new_eval`): no epoch folders; `tag` is the evaluation's name
        self.is_eval = False
        self.tag: str | None = None

    @classmethod
    def new_eval(cls, directory: str | os.PathLike) -> FileMetricLogger:
        """The Evaluator's logger (Burn's `FileMetricLogger::new_eval`): the metrics of
        `Evaluator.eval(name, ...)` go to `<directory>/test/<name>/<Metric>.log`."""
        logger = cls(directory)
        logger.is_eval = True
        return logger

    def path(self, name: str, epoch: int, split: Split) -> Path:
        if self.is_eval:
            folder = self.directory / split.value / file_name(self.tag) if self.tag else self.directory
            return folder / f"{file_name(name)}.log"
        return self.directory / split.value / f"epoch-{epoch}" / f"{file_name(name)}.log"

    def log(self, entry: MetricEntry, epoch: int, split: Split) -> None:
        path = self.path(entry.name, epoch, split)
        f = self._files.get(path)
        if f is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            # A re-run epoch (resume after an interrupted epoch) starts its log afresh.
            f = self._files[path] = open(path, "w", encoding="utf-8")  # noqa: SIM115
        f.write(entry.serialize.replace("\n", " ") + "\n")

    def end_epoch(self, epoch: int, split: Split) -> None:
        prefix = self.path("x", epoch, split).parent
        for path in [p for p in self._files if p.parent == prefix]:
            self._files.pop(path).close()

    def flush(self) -> None:
        for f in self._files.values():
            f.flush()

    def read_numeric(self, name: str, epoch: int, split: Split) -> list[NumericEntry]:
        self.flush()
        path = self.path(name, epoch, split)
        if not path.exists():
            return []
        with open(path, encoding="utf-8") as f:
            entries = (NumericEntry.deserialize(line) for line in f if line.strip())
            return [e for e in entries if e is not None]

    def epochs(self, split: Split = Split.TRAIN) -> int:
        """Number of epoch directories recorded for `split` (the highest N of `epoch-N`)."""
        root = self.directory / split.value
        if not root.is_dir():
            return 0
        found = [
            int(m.group(1)) for p in root.iterdir() if (m := re.fullmatch(r"epoch-(\d+)", p.name))
        ]
        return max(found, default=0)

    def metric_names(self, split: Split) -> list[str]:
        """Metric names that have a log file in any epoch of `split`, in first-seen order."""
        names: dict[str, None] = {}
        root = self.directory / split.value
        for epoch in range(1, self.epochs(split) + 1):
            folder = root / f"epoch-{epoch}"
            if folder.is_dir():
                for p in sorted(folder.glob("*.log")):
                    names.setdefault(p.stem, None)
        return list(names)

    def close(self) -> None:
        for f in self._files.values():
            f.close()
        self._files.clear()


class InMemoryMetricLogger(MetricLogger):
    """Keeps every entry in memory: `values[split][name][epoch] -> list[str]` (for tests).

    Example:
        >>> log = InMemoryMetricLogger()
        >>> log.log(MetricEntry("Loss", "", "1.0,1"), 1, Split.TRAIN)
        >>> log.values[Split.TRAIN]["Loss"][1]
        ['1.0,1']
    """

    def __init__(self) -> None:
        self.values: dict[Split, dict[str, dict[int, list[str]]]] = defaultdict(
            lambda: defaultdict(lambda: defaultdict(list))
        )

    def log(self, entry: MetricEntry, epoch: int, split: Split) -> None:
        self.values[split][entry.name][epoch].append(entry.serialize)

    def read_numeric(self, name: str, epoch: int, split: Split) -> list[NumericEntry]:
        lines = self.values[split][name].get(epoch, [])
        return [e for e in map(NumericEntry.deserialize, lines) if e is not None]
