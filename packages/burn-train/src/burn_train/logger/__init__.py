"""Metric loggers (Burn's `burn::train::logger`).

Example:
    >>> from burn_train.logger import FileMetricLogger
    >>> from burn_train.metric.store import Split
    >>> FileMetricLogger("/tmp/exp").path("Loss", 2, Split.VALID).as_posix()
    '/tmp/exp/valid/epoch-2/Loss.log'
"""

from ._app import install_application_logger, remove_application_logger
from ._metric import FileMetricLogger, InMemoryMetricLogger, MetricLogger, file_name
from ._mlflow import MlflowMetricLogger
from ._scalar import ScalarMetricLogger
from ._tensorboard import TensorBoardMetricLogger

__all__ = [
    "FileMetricLogger",
    "InMemoryMetricLogger",
    "MetricLogger",
    "MlflowMetricLogger",
    "ScalarMetricLogger",
    "TensorBoardMetricLogger",
    "file_name",
    "install_application_logger",
    "remove_application_logger",
]
