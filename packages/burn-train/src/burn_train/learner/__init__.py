"""The learner (Burn's `burn::train::learner`): builder, loop, outputs, stopping, summary."""

from ._builder import LearnerBuilder, LearnerConfig
from ._checkpointer import LearnerCheckpointer
from ._components import (
    EventProcessorTraining,
    LearnerEvent,
    LearnerItem,
    LearningCheckpointer,
    LearningResult,
    TrainingComponents,
)
from ._early_stopping import EarlyStoppingStrategy, MetricEarlyStoppingStrategy, StoppingCondition
from ._guard import NonFiniteLossError
from ._interrupter import Interrupter, TrainingInterrupter
from ._learner import Learner
from ._loop import TrainLoop
from ._outputs import ClassificationOutput, MultiLabelClassificationOutput, RegressionOutput
from ._summary import LearnerSummary, MetricSummary
from ._parallel import ProcessDataParallel, ThreadedDataParallel
from ._protocols import LrScheduler, Optimizer, TrainStep, ValidStep
from ._steptimes import PHASES, StepTimes
from ._strategy import SingleDevice, Strategy
from ._supervised import (
    MultiDeviceOptim,
    SupervisedLearningStrategy,
    SupervisedTraining,
    TrainingStrategy,
)
from ._train_output import TrainOutput

__all__ = [
    "ClassificationOutput",
    "EarlyStoppingStrategy",
    "EventProcessorTraining",
    "Interrupter",
    "Learner",
    "LearnerBuilder",
    "LearnerCheckpointer",
    "LearnerConfig",
    "LearnerEvent",
    "LearnerItem",
    "LearningCheckpointer",
    "LearningResult",
    "LearnerSummary",
    "LrScheduler",
    "MetricEarlyStoppingStrategy",
    "MetricSummary",
    "MultiDeviceOptim",
    "MultiLabelClassificationOutput",
    "NonFiniteLossError",
    "Optimizer",
    "ProcessDataParallel",
    "RegressionOutput",
    "PHASES",
    "SingleDevice",
    "StepTimes",
    "StoppingCondition",
    "Strategy",
    "SupervisedLearningStrategy",
    "SupervisedTraining",
    "ThreadedDataParallel",
    "TrainLoop",
    "TrainOutput",
    "TrainStep",
    "TrainingComponents",
    "TrainingInterrupter",
    "TrainingStrategy",
    "ValidStep",
]
