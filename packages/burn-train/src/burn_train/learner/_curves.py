"""Training curves next to the logs: `curves.csv` always, `curves.png` with matplotlib.

Why: after `guide train` a user wants to see the run without a dashboard: the CSV opens in any
spreadsheet, the PNG (the optional `plot` extra, `pip install 'burn-train[plot]'`) shows each
metric's train and valid epoch means.

Example:
    >>> import tempfile
    >>> from burn_train.logger import FileMetricLogger
    >>> from burn_train.metric import MetricEntry
    >>> from burn_train.metric.store import Split
    >>> d = tempfile.mkdtemp()
    >>> log = FileMetricLogger(d)
    >>> for epoch, v in [(1, "0.9,1"), (2, "0.4,1")]:
    ...     log.log(MetricEntry("Loss", "", v), epoch, Split.TRAIN); log.end_epoch(epoch, Split.TRAIN)
    >>> csv_path, _ = write_curves(d)
    >>> csv_path.read_text().splitlines()
    ['split,metric,epoch,value', 'train,Loss,1,0.9', 'train,Loss,2,0.4']
"""

from __future__ import annotations

import csv
import importlib.util
import io
import os
from pathlib import Path

from burn_record import atomic_write

from ._summary import LearnerSummary


def write_curves(directory: str | os.PathLike) -> tuple[Path | None, Path | None]:
    """Write `curves.csv` (and `curves.png` if matplotlib is installed) in `directory` from its
    metric logs; returns the paths written (None for what was not written)."""
    directory = Path(directory)
    summary = LearnerSummary(directory)
    rows = [
        (split, m.name, epoch, value)
        for split, metrics in (("train", summary.train), ("valid", summary.valid))
        for m in metrics
        for epoch, value in m.entries
    ]
    if not rows:
        return None, None
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["split", "metric", "epoch", "value"])
    writer.writerows(rows)
    csv_path = directory / "curves.csv"
    data = text.getvalue().encode()
    atomic_write(csv_path, lambda f: f.write(data))
    png = _plot(directory, summary) if importlib.util.find_spec("matplotlib") else None
    return csv_path, png


def _plot(directory: Path, summary: LearnerSummary) -> Path:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display is needed or opened
    import matplotlib.pyplot as plt

    names = sorted({m.name for m in summary.train + summary.valid})
    fig, axes = plt.subplots(1, len(names), figsize=(4.5 * len(names), 3.2), squeeze=False)
    for ax, name in zip(axes[0], names):
        for split, metrics in (("train", summary.train), ("valid", summary.valid)):
            for m in metrics:
                if m.name == name and m.entries:
                    ax.plot(*zip(*m.entries), marker="o", label=split)
        ax.set_title(name)
        ax.set_xlabel("epoch")
        ax.legend()
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return atomic_write(directory / "curves.png", lambda f: f.write(buf.getvalue()))
