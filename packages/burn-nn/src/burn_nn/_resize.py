"""`Unfold4d` (im2col) and `Interpolate1d` / `Interpolate2d`."""

from __future__ import annotations

import enum
import math

from burn_tensor import InterpolateOptions, Tensor
from burn_tensor import module as F

from ._config import config
from ._module import Module
from ._util import pair


@config
class Unfold4dConfig:
    """Config of `Unfold4d`."""

    kernel_size: list[int]
    stride: list[int] = [1, 1]
    dilation: list[int] = [1, 1]
    padding: list[int] = [0, 0]

    def init(self, device=None) -> Unfold4d:
        return Unfold4d(
            kernel_size=pair(self.kernel_size, 2, "kernel_size"),
            stride=pair(self.stride, 2, "stride"),
            dilation=pair(self.dilation, 2, "dilation"),
            padding=pair(self.padding, 2, "padding"),
        )


class Unfold4d(Module):
    """Sliding windows as columns. Shapes: `[n, c, h, w]` -> `[n, c * kh * kw, windows]`."""

    kernel_size: list[int]
    stride: list[int] = [1, 1]
    dilation: list[int] = [1, 1]
    padding: list[int] = [0, 0]

    def forward(self, x: Tensor) -> Tensor:
        return F.unfold4d(x, self.kernel_size, self.stride, self.padding, self.dilation)


class InterpolateMode(enum.Enum):
    """`Nearest`, `Linear` (bilinear), `Cubic` (bicubic); align_corners=True as Burn."""

    Nearest = "nearest"
    Linear = "bilinear"
    Cubic = "bicubic"


def _out_size(sizes, output_size, scale_factor):
    if output_size is not None:
        return list(output_size)
    if scale_factor is not None:
        return [int(math.floor(s * f)) for s, f in zip(sizes, scale_factor)]
    raise ValueError("Interpolate: set output_size or scale_factor")


@config
class Interpolate2dConfig:
    """Config of `Interpolate2d`: `output_size [h, w]` or `scale_factor [sh, sw]`."""

    output_size: list[int] | None = None
    scale_factor: list[float] | None = None
    mode: InterpolateMode = InterpolateMode.Nearest

    def init(self, device=None) -> Interpolate2d:
        return Interpolate2d(
            output_size=self.output_size, scale_factor=self.scale_factor, mode=self.mode
        )


class Interpolate2d(Module):
    """Resize. Shapes: `[n, c, h, w]` -> `[n, c, h', w']`."""

    output_size: list[int] | None = None
    scale_factor: list[float] | None = None
    mode: InterpolateMode = InterpolateMode.Nearest

    def forward(self, x: Tensor) -> Tensor:
        size = _out_size(x.dims()[2:], self.output_size, self.scale_factor)
        return F.interpolate(x, size, InterpolateOptions(self.mode.value))


@config
class Interpolate1dConfig:
    """Config of `Interpolate1d`: `output_size` or `scale_factor`."""

    output_size: int | None = None
    scale_factor: float | None = None
    mode: InterpolateMode = InterpolateMode.Nearest

    def init(self, device=None) -> Interpolate1d:
        return Interpolate1d(
            output_size=self.output_size, scale_factor=self.scale_factor, mode=self.mode
        )


class Interpolate1d(Module):
    """Resize. Shapes: `[n, c, length]` -> `[n, c, length']` (a 2-D resize of height 1)."""

    output_size: int | None = None
    scale_factor: float | None = None
    mode: InterpolateMode = InterpolateMode.Nearest

    def forward(self, x: Tensor) -> Tensor:
        (length,) = _out_size(
            x.dims()[2:],
            None if self.output_size is None else [self.output_size],
            None if self.scale_factor is None else [self.scale_factor],
        )
        out = F.interpolate(x.unsqueeze_dim(2), [1, length], InterpolateOptions(self.mode.value))
        return out.squeeze_dim(2)
