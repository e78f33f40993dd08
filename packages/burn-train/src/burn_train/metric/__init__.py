"""Metrics (Burn's `burn::train::metric`).

A metric declares `Input` (the type it consumes), `update(item, metadata) -> MetricEntry` and
`clear()`; numeric metrics also give `value()` and can be plotted. Step outputs reach a metric
through adaptors (`register_adaptor(OutputType, InputType)`).

Example:
    >>> from burn_train.metric import AccuracyInput, AccuracyMetric, MetricMetadata
    >>> m = AccuracyMetric()
    >>> m.update(AccuracyInput([[0.2, 0.8]], [1]), MetricMetadata.fake()).formatted
    'epoch 100.00 % - batch 100.00 %'
"""

from . import store
from ._acc import AccuracyInput, AccuracyMetric, TopKAccuracyInput, TopKAccuracyMetric
from ._auroc import AurocInput, AurocMetric, HammingScore, HammingScoreInput, auroc
from ._base import (
    Adaptor,
    Metric,
    MetricEntry,
    MetricMetadata,
    Numeric,
    NumericEntry,
    adapt,
    is_numeric,
    metric_name,
    register_adaptor,
)
from ._confusion import (
    ClassificationMetricConfig,
    ClassReduction,
    ConfusionStatsInput,
    DecisionRule,
    FBetaScoreMetric,
    PrecisionMetric,
    RecallMetric,
)
from ._dice import DiceInput, DiceMetric, DiceMetricConfig
from ._gpu import CudaMetric, GpuTemperature
from ._loss import LossInput, LossMetric
from ._text import (
    CerInput,
    CharErrorRate,
    PerplexityInput,
    PerplexityMetric,
    WerInput,
    WordErrorRate,
    edit_distance,
)
from ._precision import LossScaleMetric, SkippedStepsMetric
from ._speed import IterationSpeedMetric, LearningRateMetric
from ._state import FormatOptions, NumericMetricState
from ._system import CpuMemory, CpuTemperature, CpuUse

__all__ = [
    "CerInput",
    "CharErrorRate",
    "DiceInput",
    "DiceMetric",
    "DiceMetricConfig",
    "PerplexityInput",
    "PerplexityMetric",
    "WerInput",
    "WordErrorRate",
    "edit_distance",
    "LossScaleMetric",
    "SkippedStepsMetric",
    "AccuracyInput",
    "AccuracyMetric",
    "Adaptor",
    "AurocInput",
    "AurocMetric",
    "ClassReduction",
    "ClassificationMetricConfig",
    "ConfusionStatsInput",
    "CpuMemory",
    "CpuTemperature",
    "CpuUse",
    "CudaMetric",
    "DecisionRule",
    "FBetaScoreMetric",
    "FormatOptions",
    "GpuTemperature",
    "HammingScore",
    "HammingScoreInput",
    "IterationSpeedMetric",
    "LearningRateMetric",
    "LossInput",
    "LossMetric",
    "Metric",
    "MetricEntry",
    "MetricMetadata",
    "Numeric",
    "NumericEntry",
    "NumericMetricState",
    "PrecisionMetric",
    "RecallMetric",
    "TopKAccuracyInput",
    "TopKAccuracyMetric",
    "adapt",
    "auroc",
    "is_numeric",
    "metric_name",
    "register_adaptor",
    "store",
]
