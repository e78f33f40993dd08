"""`EvaluatorBuilder`: metrics, renderer and logs of a test-set evaluation (Burn 0.20)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..learner._interrupter import TrainingInterrupter
from ..learner._processor import MetricsProcessor
from ..logger._metric import FileMetricLogger
from ..metric.store import Split
from ..renderer import MetricsRenderer, default_renderer
from ._evaluator import Evaluator


class EvaluatorBuilder:
    """Configure an `Evaluator` (Burn's `EvaluatorBuilder`); every option returns the builder.

    Args:
        directory: where `evaluation.log` and `test/<name>/<Metric>.log` go.

    Example:
        >>> import tempfile
        >>> from burn_train.evaluator import EvaluatorBuilder
        >>> from burn_train.metric import AccuracyMetric, LossMetric
        >>> builder = EvaluatorBuilder(tempfile.mkdtemp()).metrics((AccuracyMetric(), LossMetric()))
        >>> # evaluator = builder.build(result.model); renderer = evaluator.eval("mnist", test)
    """

    def __init__(self, directory: str | os.PathLike) -> None:
        self._directory = Path(directory)
        self._metrics: list[tuple[Any, bool]] = []
        self._renderer: MetricsRenderer | None = None
        self._app_log = True
        self._summary = False
        self._interrupter = TrainingInterrupter()
        self._loggers: list[Any] | None = None

    @classmethod
    def new(cls, directory: str | os.PathLike) -> EvaluatorBuilder:
        return cls(directory)

    def metric_numeric(self, metric: Any) -> EvaluatorBuilder:
        """Register a test metric with a numeric value (`value()`)."""
        self._metrics.append((metric, True))
        return self

    def metric(self, metric: Any) -> EvaluatorBuilder:
        """Register a test metric shown as text."""
        self._metrics.append((metric, False))
        return self

    def metrics(self, metrics: tuple[Any, ...] | list[Any]) -> EvaluatorBuilder:
        """Register numeric metrics: `.metrics((AccuracyMetric(), LossMetric()))`."""
        for m in metrics if isinstance(metrics, (tuple, list)) else (metrics,):
            self.metric_numeric(m)
        return self

    def metrics_text(self, metrics: tuple[Any, ...] | list[Any]) -> EvaluatorBuilder:
        for m in metrics if isinstance(metrics, (tuple, list)) else (metrics,):
            self.metric(m)
        return self

    def renderer(self, renderer: MetricsRenderer) -> EvaluatorBuilder:
        """Render with `renderer` (e.g. `LearningResult.renderer` of the training run)."""
        self._renderer = renderer
        return self

    def with_application_logger(self, enabled: Any = True) -> EvaluatorBuilder:
        """Write (or, with None/False, not) `evaluation.log` in the directory."""
        self._app_log = bool(enabled)
        return self

    def with_metric_logger(self, logger: Any) -> EvaluatorBuilder:
        """Add a metric logger; the first one replaces the default `FileMetricLogger`."""
        self._loggers = [*(self._loggers or []), logger]
        return self

    def summary(self) -> EvaluatorBuilder:
        """Log (and print) each numeric metric's mean over the test set when an eval ends."""
        self._summary = True
        return self

    def interrupter(self) -> TrainingInterrupter:
        return self._interrupter

    def build(self, model: Any) -> Evaluator:
        """The Evaluator of `model` (it needs `valid_step(batch) -> output`)."""
        if not callable(getattr(model, "valid_step", None)):
            raise TypeError(f"{type(model).__name__} needs valid_step(batch) -> output to evaluate")
        self._directory.mkdir(parents=True, exist_ok=True)
        loggers = (
            self._loggers
            if self._loggers is not None
            else [FileMetricLogger.new_eval(self._directory)]
        )
        processor = MetricsProcessor(loggers=loggers, renderer=self._renderer or default_renderer())
        for metric, numeric in self._metrics:
            processor.register(Split.TEST, metric, numeric)
        log_path = self._directory / "evaluation.log" if self._app_log else None
        return Evaluator(model, processor, self._interrupter, log_path, self._summary)
