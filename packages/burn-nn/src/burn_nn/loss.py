"""`burn_nn.loss`: Burn's `burn::nn::loss` path."""

from ._loss import (
    BinaryCrossEntropyLoss,
    BinaryCrossEntropyLossConfig,
    CrossEntropyLoss,
    CrossEntropyLossConfig,
    HuberLoss,
    HuberLossConfig,
    KLDivLoss,
    KLDivLossConfig,
    MseLoss,
    MSELoss,
    Reduction,
    SmoothL1Loss,
    SmoothL1LossConfig,
)

__all__ = [
    "BinaryCrossEntropyLoss",
    "BinaryCrossEntropyLossConfig",
    "CrossEntropyLoss",
    "CrossEntropyLossConfig",
    "HuberLoss",
    "HuberLossConfig",
    "KLDivLoss",
    "KLDivLossConfig",
    "MSELoss",
    "MseLoss",
    "Reduction",
    "SmoothL1Loss",
    "SmoothL1LossConfig",
]
