"""`burn_nn.interpolate`: Burn's `burn::nn::interpolate` path."""

from ._resize import (
    Interpolate1d,
    Interpolate1dConfig,
    Interpolate2d,
    Interpolate2dConfig,
    InterpolateMode,
)

__all__ = [
    "Interpolate1d",
    "Interpolate1dConfig",
    "Interpolate2d",
    "Interpolate2dConfig",
    "InterpolateMode",
]
