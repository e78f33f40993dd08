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
from ._loss_extra import (
    CosineEmbeddingLoss,
    CosineEmbeddingLossConfig,
    PoissonNllLoss,
    PoissonNllLossConfig,
)

__all__ = [
    "BinaryCrossEntropyLoss",
    "BinaryCrossEntropyLossConfig",
    "CosineEmbeddingLoss",
    "CosineEmbeddingLossConfig",
    "PoissonNllLoss",
    "PoissonNllLossConfig",
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
