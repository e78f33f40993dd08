"""Step outputs and their adaptors: `ClassificationOutput`, `MultiLabelClassificationOutput`,
`RegressionOutput`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..metric import (
    AccuracyInput,
    Adaptor,
    AurocInput,
    ConfusionStatsInput,
    HammingScoreInput,
    LossInput,
    TopKAccuracyInput,
    register_adaptor,
)
from ..metric._base import to_numpy


@dataclass
class ClassificationOutput(Adaptor):
    """`loss` `[1]`, `output` `[batch, n_classes]` logits, `targets` `[batch]` class ids.

    Adapts to Accuracy, TopKAccuracy, Loss, Precision/Recall/FBeta (`ConfusionStatsInput`,
    one-hot targets) and AUROC.

    Example:
        >>> from burn_train.metric import AccuracyInput
        >>> out = ClassificationOutput(0.3, [[0.1, 0.9]], [1])
        >>> out.adapt(AccuracyInput).targets
        [1]
    """

    loss: Any
    output: Any
    targets: Any

    @classmethod
    def new(cls, loss: Any, output: Any, targets: Any) -> ClassificationOutput:
        return cls(loss, output, targets)


@dataclass
class MultiLabelClassificationOutput(Adaptor):
    """`loss`, `output` `[batch, n_labels]` logits, `targets` `[batch, n_labels]` in {0, 1}.

    Adapts to Loss, Hamming score and the confusion metrics.
    """

    loss: Any
    output: Any
    targets: Any

    @classmethod
    def new(cls, loss: Any, output: Any, targets: Any) -> MultiLabelClassificationOutput:
        return cls(loss, output, targets)


@dataclass
class RegressionOutput(Adaptor):
    """`loss`, `output` `[batch, d]` and `targets` `[batch, d]`; adapts to Loss."""

    loss: Any
    output: Any
    targets: Any

    @classmethod
    def new(cls, loss: Any, output: Any, targets: Any) -> RegressionOutput:
        return cls(loss, output, targets)


def _one_hot_targets(out: ClassificationOutput) -> ConfusionStatsInput:
    scores = to_numpy(out.output)
    targets = to_numpy(out.targets).reshape(-1).astype(np.int64)
    if scores.ndim == 2 and scores.shape[1] > 1:
        return ConfusionStatsInput(scores, np.eye(scores.shape[1], dtype=bool)[targets])
    return ConfusionStatsInput(scores.reshape(-1, 1), targets.reshape(-1, 1).astype(bool))


register_adaptor(ClassificationOutput, AccuracyInput)(lambda o: AccuracyInput(o.output, o.targets))
register_adaptor(ClassificationOutput, TopKAccuracyInput)(
    lambda o: TopKAccuracyInput(o.output, o.targets)
)
register_adaptor(ClassificationOutput, LossInput)(lambda o: LossInput(o.loss))
register_adaptor(ClassificationOutput, ConfusionStatsInput)(_one_hot_targets)
register_adaptor(ClassificationOutput, AurocInput)(lambda o: AurocInput(o.output, o.targets))
register_adaptor(MultiLabelClassificationOutput, LossInput)(lambda o: LossInput(o.loss))
register_adaptor(MultiLabelClassificationOutput, HammingScoreInput)(
    lambda o: HammingScoreInput(o.output, o.targets)
)
register_adaptor(MultiLabelClassificationOutput, ConfusionStatsInput)(
    lambda o: ConfusionStatsInput(o.output, o.targets)
)
register_adaptor(RegressionOutput, LossInput)(lambda o: LossInput(o.loss))
