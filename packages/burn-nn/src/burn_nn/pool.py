"""`burn_nn.pool`: Burn's `burn::nn::pool` path."""

from ._pool3d import (
    AdaptiveAvgPool3d,
    AdaptiveAvgPool3dConfig,
    AvgPool3d,
    AvgPool3dConfig,
    MaxPool3d,
    MaxPool3dConfig,
)
from ._pool import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool1dConfig,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool2dConfig,
    AvgPool1d,
    AvgPool1dConfig,
    AvgPool2d,
    AvgPool2dConfig,
    MaxPool1d,
    MaxPool1dConfig,
    MaxPool2d,
    MaxPool2dConfig,
)

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool1dConfig",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool2dConfig",
    "AvgPool1d",
    "AvgPool1dConfig",
    "AvgPool2d",
    "AvgPool2dConfig",
    "MaxPool1d",
    "MaxPool1dConfig",
    "MaxPool2d",
    "MaxPool2dConfig",
    "AdaptiveAvgPool3d",
    "AdaptiveAvgPool3dConfig",
    "AvgPool3d",
    "AvgPool3dConfig",
    "MaxPool3d",
    "MaxPool3dConfig",
]
