"""`CliMetricsRenderer`: plain progress lines, for logs and pipes (no terminal control codes)."""

from __future__ import annotations

import sys
import time
from typing import IO, Any

from ._base import EvaluationName, EvaluationProgress, MetricsRenderer, MetricState, TrainingProgress


class CliMetricsRenderer(MetricsRenderer):
    """Prints one line per iteration, throttled to one every `interval` seconds, plus the last
    iteration of every epoch, e.g.::

        [train] epoch 1/3 iter 12 | 384/1000 items (38%) | Loss: epoch 0.61 - batch 0.55

    Args:
        stream: where to write (stdout by default).
        interval: minimal seconds between two lines of the same split (0 prints every line).
    """

    def __init__(self, stream: IO[str] | None = None, interval: float = 1.0) -> None:
        self.stream = stream
        self.interval = interval
        self.metrics: dict[str, dict[str, str]] = {"train": {}, "valid": {}, "test": {}}
        self._last = {"train": -float("inf"), "valid": -float("inf"), "test": -float("inf")}
        self._test_name = ""

    @property
    def out(self) -> IO[str]:
        return self.stream if self.stream is not None else sys.stdout

    def update_train(self, state: MetricState) -> None:
        self.metrics["train"][state.entry.name] = state.entry.formatted

    def update_valid(self, state: MetricState) -> None:
        self.metrics["valid"][state.entry.name] = state.entry.formatted

    def render_train(self, item: TrainingProgress) -> None:
        self._render("train", item)

    def render_valid(self, item: TrainingProgress) -> None:
        self._render("valid", item)

    def update_test(self, name: EvaluationName, state: MetricState) -> None:
        if str(name) != self._test_name:  # a new evaluation: its own metrics and first line
            self._test_name, self.metrics["test"] = str(name), {}
            self._last["test"] = -float("inf")
        self.metrics["test"][state.entry.name] = state.entry.formatted

    def render_test(self, item: EvaluationProgress) -> None:
        """`[test name] iter N | k/n items (p%) | Metric: ...`, throttled like training."""
        now = time.monotonic()
        p = item.progress
        done = p.items_processed >= p.items_total
        if not done and now - self._last["test"] < self.interval:
            return
        self._last["test"] = now
        pct = 100 * p.items_processed // max(p.items_total, 1)
        parts = [
            f"[test {self._test_name}] iter {item.iteration}",
            f"{p.items_processed}/{p.items_total} items ({pct}%)",
        ]
        parts += [f"{name}: {text}" for name, text in self.metrics["test"].items()]
        self.out.write(" | ".join(parts) + "\n")
        self.out.flush()

    def _render(self, split: str, item: TrainingProgress) -> None:
        now = time.monotonic()
        done = item.progress.items_processed >= item.progress.items_total
        if not done and now - self._last[split] < self.interval:
            return
        self._last[split] = now
        self.out.write(self.line(split, item) + "\n")
        self.out.flush()

    def line(self, split: str, item: TrainingProgress) -> str:
        p = item.progress
        pct = 100 * p.items_processed // max(p.items_total, 1)
        parts = [
            f"[{split}] epoch {item.epoch}/{item.epoch_total} iter {item.iteration}",
            f"{p.items_processed}/{p.items_total} items ({pct}%)",
        ]
        parts += [f"{name}: {text}" for name, text in self.metrics[split].items()]
        return " | ".join(parts)

    def end_epoch(self, split: Any, epoch: int) -> None:
        self.metrics[getattr(split, "value", str(split))] = {}
        self._last.update(train=-float("inf"), valid=-float("inf"))

    def on_train_end(self, summary: Any = None) -> None:
        if summary is not None:
            self.out.write(str(summary) + "\n")
            self.out.flush()
