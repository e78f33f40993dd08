"""burn_train: the training loop of burn-py (Burn's `burn::train`).

`LearnerBuilder(artifact_dir)` configures metrics, loggers, the renderer (live dashboard on a
terminal), checkpoints, early stopping and interrupts; `.build(model, optim, lr)` gives a
`Learner` whose `fit(train_loader, valid_loader)` returns the trained model. Models provide
`train_step(batch) -> TrainOutput` and `valid_step(batch) -> output`.

Example:
    >>> from burn_train import LearnerBuilder, ClassificationOutput, TrainOutput
    >>> from burn_train.metric import AccuracyMetric, LossMetric
    >>> builder = (LearnerBuilder("/tmp/guide")
    ...     .metric_train_numeric(AccuracyMetric()).metric_valid_numeric(AccuracyMetric())
    ...     .metric_train_numeric(LossMetric()).metric_valid_numeric(LossMetric())
    ...     .num_epochs(10).summary())
"""

from burn_optim import MixedPrecision  # re-exported: the Learner's mixed_precision policy

from . import checkpoint, evaluator, logger, metric, renderer
from .evaluator import Evaluator, EvaluatorBuilder
from .learner import (
    ClassificationOutput,
    EarlyStoppingStrategy,
    EventProcessorTraining,
    Interrupter,
    Learner,
    LearnerBuilder,
    LearnerEvent,
    LearnerItem,
    LearnerSummary,
    LearningCheckpointer,
    LearningResult,
    MetricEarlyStoppingStrategy,
    MetricSummary,
    MultiDeviceOptim,
    MultiLabelClassificationOutput,
    NonFiniteLossError,
    RegressionOutput,
    StoppingCondition,
    SupervisedLearningStrategy,
    SupervisedTraining,
    TrainingComponents,
    TrainingInterrupter,
    TrainingStrategy,
    TrainLoop,
    TrainOutput,
    TrainStep,
    ValidStep,
)
from .metric.store import Aggregate, Direction, Split

__all__ = [
    "MixedPrecision",
    "Evaluator",
    "EvaluatorBuilder",
    "EventProcessorTraining",
    "LearnerEvent",
    "LearnerItem",
    "LearningCheckpointer",
    "LearningResult",
    "MultiDeviceOptim",
    "SupervisedLearningStrategy",
    "SupervisedTraining",
    "TrainingComponents",
    "TrainingStrategy",
    "evaluator",
    "Aggregate",
    "ClassificationOutput",
    "Direction",
    "EarlyStoppingStrategy",
    "Interrupter",
    "Learner",
    "LearnerBuilder",
    "LearnerSummary",
    "MetricEarlyStoppingStrategy",
    "MetricSummary",
    "MultiLabelClassificationOutput",
    "NonFiniteLossError",
    "RegressionOutput",
    "Split",
    "StoppingCondition",
    "TrainLoop",
    "TrainOutput",
    "TrainStep",
    "ValidStep",
    "TrainingInterrupter",
    "checkpoint",
    "logger",
    "metric",
    "renderer",
]
