"""3-D pooling modules: MaxPool3d, AvgPool3d, AdaptiveAvgPool3d and their configs.

Burn 0.20 has `module::adaptive_avg_pool3d` only (MaxPool3d/AvgPool3d are open Burn requests);
these follow the 2-D modules' fields (`strides` defaulting to the kernel, `PaddingConfig3d`) and
PyTorch's `MaxPool3d`/`AvgPool3d`/`AdaptiveAvgPool3d` semantics. No `ceil_mode` (floor output
sizes only): asymmetric `PaddingConfig3d` (Same, or Explicit with 6 values) pads the input by hand,
with -inf for the max pool and zeros for the average pool (the hand-padded part then counts as
input, as in the 2-D modules).
"""

from __future__ import annotations

from burn_tensor import Tensor
from burn_tensor import module as F

from ._config import config
from ._module import Module
from ._padding import PaddingConfig3d
from ._pool import _prepare, _resolve
from ._util import pair


@config
class MaxPool3dConfig:
    """Config of `MaxPool3d` (`strides` defaults to `kernel_size`).

    Example:
        >>> MaxPool3dConfig([2, 2, 2]).strides
        [2, 2, 2]
    """

    kernel_size: list[int]
    strides: list[int] | None = None
    padding: PaddingConfig3d = PaddingConfig3d.Valid
    dilation: list[int] = [1, 1, 1]

    def __post_init__(self):
        _resolve(self, "strides", list(self.kernel_size))

    def init(self, device=None) -> MaxPool3d:
        return MaxPool3d(
            kernel_size=pair(self.kernel_size, 3, "kernel_size"),
            strides=pair(self.strides, 3, "strides"),
            padding=PaddingConfig3d.coerce(self.padding),
            dilation=pair(self.dilation, 3, "dilation"),
        )


class MaxPool3d(Module):
    """Shapes: `[batch, channels, d, h, w]` -> `[batch, channels, d', h', w']`.

    Example:
        >>> from burn_ndarray import NdArray
        >>> x = Tensor.ones([1, 1, 4, 4, 6], NdArray().device())
        >>> MaxPool3dConfig([2, 2, 2]).init().forward(x).dims()
        [1, 1, 2, 2, 3]
    """

    kernel_size: list[int]
    strides: list[int]
    padding: PaddingConfig3d = PaddingConfig3d.Valid
    dilation: list[int] = [1, 1, 1]

    def forward(self, x: Tensor) -> Tensor:
        x, sym = _prepare(x, PaddingConfig3d.coerce(self.padding), self.kernel_size,
                          self.strides, self.dilation, False, float("-inf"))
        return F.max_pool3d(x, self.kernel_size, self.strides, sym, self.dilation)


@config
class AvgPool3dConfig:
    """Config of `AvgPool3d` (`strides` defaults to `kernel_size`)."""

    kernel_size: list[int]
    strides: list[int] | None = None
    padding: PaddingConfig3d = PaddingConfig3d.Valid
    count_include_pad: bool = True

    def __post_init__(self):
        _resolve(self, "strides", list(self.kernel_size))

    def init(self, device=None) -> AvgPool3d:
        return AvgPool3d(
            kernel_size=pair(self.kernel_size, 3, "kernel_size"),
            strides=pair(self.strides, 3, "strides"),
            padding=PaddingConfig3d.coerce(self.padding),
            count_include_pad=self.count_include_pad,
        )


class AvgPool3d(Module):
    """Shapes: `[batch, channels, d, h, w]` -> `[batch, channels, d', h', w']`."""

    kernel_size: list[int]
    strides: list[int]
    padding: PaddingConfig3d = PaddingConfig3d.Valid
    count_include_pad: bool = True

    def forward(self, x: Tensor) -> Tensor:
        x, sym = _prepare(x, PaddingConfig3d.coerce(self.padding), self.kernel_size,
                          self.strides, [1, 1, 1], False, 0.0)
        return F.avg_pool3d(x, self.kernel_size, self.strides, sym, self.count_include_pad)


@config
class AdaptiveAvgPool3dConfig:
    """Config of `AdaptiveAvgPool3d` (Burn's `module::adaptive_avg_pool3d`)."""

    output_size: list[int]

    def init(self, device=None) -> AdaptiveAvgPool3d:
        return AdaptiveAvgPool3d(output_size=pair(self.output_size, 3, "output_size"))


class AdaptiveAvgPool3d(Module):
    """Shapes: `[batch, channels, d, h, w]` -> `[batch, channels, *output_size]`."""

    output_size: list[int]

    def forward(self, x: Tensor) -> Tensor:
        return F.adaptive_avg_pool3d(x, self.output_size)
