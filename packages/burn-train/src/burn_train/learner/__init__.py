"""The learner (Burn's `burn::train::learner`): builder, loop, outputs, stopping, summary."""

from ._builder import LearnerBuilder, LearnerConfig
from ._checkpointer import LearnerCheckpointer
from ._early_stopping import EarlyStoppingStrategy, MetricEarlyStoppingStrategy, StoppingCondition
from ._guard import NonFiniteLossError
from ._interrupter import Interrupter, TrainingInterrupter
from ._learner import Learner
from ._outputs import ClassificationOutput, MultiLabelClassificationOutput, RegressionOutput
from ._summary import LearnerSummary, MetricSummary
from ._train_output import ConstantLr, GradientsAccumulator, TrainOutput

__all__ = [
    "ClassificationOutput",
    "ConstantLr",
    "EarlyStoppingStrategy",
    "GradientsAccumulator",
    "Interrupter",
    "Learner",
    "LearnerBuilder",
    "LearnerCheckpointer",
    "LearnerConfig",
    "LearnerSummary",
    "MetricEarlyStoppingStrategy",
    "MetricSummary",
    "MultiLabelClassificationOutput",
    "NonFiniteLossError",
    "RegressionOutput",
    "StoppingCondition",
    "TrainOutput",
    "TrainingInterrupter",
]
