"""`burn_nn.conv`: Burn's `burn::nn::conv` path."""

from ._conv import Conv1d, Conv1dConfig, Conv2d, Conv2dConfig
from ._conv3d import Conv3d, Conv3dConfig, ConvTranspose3d, ConvTranspose3dConfig
from ._deform_conv import DeformConv2d, DeformConv2dConfig
from ._conv_transpose import (
    ConvTranspose1d,
    ConvTranspose1dConfig,
    ConvTranspose2d,
    ConvTranspose2dConfig,
)

__all__ = [
    "Conv1d",
    "Conv1dConfig",
    "Conv2d",
    "Conv2dConfig",
    "ConvTranspose1d",
    "ConvTranspose1dConfig",
    "ConvTranspose2d",
    "ConvTranspose2dConfig",
    "Conv3d",
    "Conv3dConfig",
    "ConvTranspose3d",
    "ConvTranspose3dConfig",
    "DeformConv2d",
    "DeformConv2dConfig",
]
