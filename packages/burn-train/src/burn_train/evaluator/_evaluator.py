"""`Evaluator.eval(name, dataloader)`: one pass of `valid_step` over a test set."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from ..learner._loop import _progress
from ..learner._processor import MetricsProcessor
from ..learner._strategy import start_epoch
from ..logger._app import install_application_logger, remove_application_logger
from ..metric._base import MetricEntry, MetricMetadata, NumericEntry
from ..metric.store import Split, aggregate
from ..renderer._base import EvaluationName

log = logging.getLogger("burn_train")


class _Means:
    """Collects the numeric entries of one evaluation: each metric's count-weighted mean."""

    def __init__(self) -> None:
        self.entries: dict[str, list[NumericEntry]] = {}

    def log(self, entry: MetricEntry, epoch: int, split: Split) -> None:
        value = NumericEntry.deserialize(entry.serialize)
        if value is not None:
            self.entries.setdefault(entry.name, []).append(value)

    def end_epoch(self, epoch: int, split: Split) -> None:
        pass

    def close(self) -> None:
        pass


class Evaluator:
    """Runs a model on test sets (Burn's `Evaluator`); create it with `EvaluatorBuilder`.

    After `eval(name, loader)`, `results[name]` holds each numeric metric's mean over the set
    (count-weighted, as the summary) — a burn-py convenience beside the log files.
    """

    def __init__(
        self,
        model: Any,
        processor: MetricsProcessor,
        interrupter: Any,
        log_path: Path | None,
        summary: bool,
    ) -> None:
        self.model = model
        self.processor = processor
        self.interrupter = interrupter
        self.log_path = log_path
        self.summary = summary
        self.results: dict[str, dict[str, float]] = {}

    def eval(self, name: Any, dataloader: Any) -> Any:
        """Evaluate on `dataloader` (moved to the model's device when it has `to_device`);
        returns the renderer.

        The metric files go to `<directory>/test/<name>/<Metric>.log`, one line per batch.
        """
        handler = install_application_logger(self.log_path) if self.log_path else None
        try:
            return self._eval(str(name), dataloader)
        finally:
            if handler is not None:
                remove_application_logger(handler)

    def _eval(self, name: str, dataloader: Any) -> Any:
        proc = self.processor
        proc.test_name = EvaluationName(name)
        means = _Means()
        loggers = proc.loggers
        for logger in loggers:
            if hasattr(logger, "tag"):
                logger.tag = name
        proc.loggers = [*loggers, means]
        log.info("Evaluating %s on %s", type(self.model).__name__, name)
        # as Burn: the batches go to the model's device (a loader built for training, on the
        # autodiff device, serves the inference model's inner device)
        devices = getattr(self.model, "devices", None)
        to_device = getattr(dataloader, "to_device", None)
        if callable(devices) and callable(to_device) and devices():
            dataloader = to_device(devices()[0])
        iterator = start_epoch(dataloader, 1)
        iteration = 0
        proc.renderer.start(self.interrupter)
        try:
            for batch in iterator:
                iteration += 1
                item = self.model.valid_step(batch)
                meta = MetricMetadata(
                    _progress(iterator, dataloader, iteration), 0, 1, iteration, None,
                    time.perf_counter(),
                )  # fmt: skip
                proc.process(Split.TEST, item, meta)
                if self.interrupter.should_stop():
                    log.info("Testing interrupted.")
                    break
        finally:
            close = getattr(iterator, "close", None)
            if callable(close):
                close()
            proc.end_epoch(Split.TEST, 0)
            proc.loggers = loggers
        numeric = {r.metric.name() for r in proc.test if r.numeric}
        self.results[name] = {
            k: v for k, e in means.entries.items() if k in numeric and (v := aggregate(e)) is not None
        }
        if self.summary:
            lines = [f"{k}: {v:.4f}" for k, v in self.results[name].items()]
            log.info("Evaluation %s: %s", name, ", ".join(lines))
            print(f"Evaluation {name}: " + ", ".join(lines))
        proc.renderer.on_test_end()
        proc.renderer.close()
        return proc.renderer
