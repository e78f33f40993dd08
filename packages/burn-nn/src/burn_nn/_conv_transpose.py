"""`ConvTranspose1d` / `ConvTranspose2d` and their configs (Burn's `nn::conv`)."""

from __future__ import annotations

import math

from burn_tensor import Tensor
from burn_tensor import module as F

from ._config import config
from ._initializer import Initializer, KaimingUniform
from ._module import Module
from ._param import Param
from ._util import check_initializer, check_sizes, device_or_default, pair


def _params(initializer, shape, c_in, c_out, groups, kernel, bias, device):
    if groups < 1 or c_in % groups or c_out % groups:
        raise ValueError(f"channels [{c_in}, {c_out}] must both be divisible by groups={groups}")
    k = math.prod(kernel)
    # As Burn (and PyTorch): fan_in counts the weight's dim 1 (out / groups) times the kernel.
    fan_in, fan_out = c_out // groups * k, c_in // groups * k
    weight = initializer.init_with(shape, fan_in, fan_out, device)
    b = initializer.init_with([c_out], fan_in, fan_out, device) if bias else None
    return weight, b


@config
class ConvTranspose1dConfig:
    """Config of `ConvTranspose1d`: `channels=[in, out]`; weight `[in, out / groups, kernel_size]`.

    Example:
        >>> ConvTranspose1dConfig([2, 4], 3).padding_out
        0
    """

    channels: list[int]
    kernel_size: int
    stride: int = 1
    dilation: int = 1
    groups: int = 1
    padding: int = 0
    padding_out: int = 0
    bias: bool = True
    initializer: Initializer = KaimingUniform()

    def init(self, device=None) -> ConvTranspose1d:
        device = device_or_default(device)
        c_in, c_out = pair(self.channels, 2, "channels")
        check_sizes(
            "ConvTranspose1dConfig",
            channels=[c_in, c_out],
            kernel_size=self.kernel_size,
            stride=self.stride,
            dilation=self.dilation,
        )
        check_initializer("ConvTranspose1dConfig", self.initializer)
        shape = [c_in, c_out // self.groups, self.kernel_size]
        w, b = _params(
            self.initializer, shape, c_in, c_out, self.groups, [self.kernel_size], self.bias, device
        )
        return ConvTranspose1d(
            weight=w,
            bias=b,
            stride=self.stride,
            kernel_size=self.kernel_size,
            dilation=self.dilation,
            groups=self.groups,
            padding=self.padding,
            padding_out=self.padding_out,
        )


class ConvTranspose1d(Module):
    """1-D transposed convolution.

    Shapes: `[batch, channels_in, length]` -> `[batch, channels_out, length_out]` with
    `length_out = (length - 1) * stride - 2 * padding + dilation * (kernel - 1) + padding_out + 1`.
    """

    weight: Param
    bias: Param | None = None
    stride: int = 1
    kernel_size: int = 1
    dilation: int = 1
    groups: int = 1
    padding: int = 0
    padding_out: int = 0

    def forward(self, x: Tensor) -> Tensor:
        return F.conv_transpose1d(
            x,
            self.weight.val(),
            None if self.bias is None else self.bias.val(),
            stride=self.stride,
            padding=self.padding,
            padding_out=self.padding_out,
            dilation=self.dilation,
            groups=self.groups,
        )


@config
class ConvTranspose2dConfig:
    """Config of `ConvTranspose2d`: `channels=[in, out]`, `kernel_size=[kh, kw]`; weight
    `[in, out / groups, kh, kw]`.

    Example:
        >>> ConvTranspose2dConfig([2, 4], [3, 3]).stride
        [1, 1]
    """

    channels: list[int]
    kernel_size: list[int]
    stride: list[int] = [1, 1]
    dilation: list[int] = [1, 1]
    groups: int = 1
    padding: list[int] = [0, 0]
    padding_out: list[int] = [0, 0]
    bias: bool = True
    initializer: Initializer = KaimingUniform()

    def init(self, device=None) -> ConvTranspose2d:
        device = device_or_default(device)
        c_in, c_out = pair(self.channels, 2, "channels")
        kernel = pair(self.kernel_size, 2, "kernel_size")
        check_sizes(
            "ConvTranspose2dConfig",
            channels=[c_in, c_out],
            kernel_size=kernel,
            stride=pair(self.stride, 2, "stride"),
            dilation=pair(self.dilation, 2, "dilation"),
        )
        check_initializer("ConvTranspose2dConfig", self.initializer)
        shape = [c_in, c_out // self.groups, *kernel]
        w, b = _params(self.initializer, shape, c_in, c_out, self.groups, kernel, self.bias, device)
        return ConvTranspose2d(
            weight=w,
            bias=b,
            stride=pair(self.stride, 2, "stride"),
            kernel_size=kernel,
            dilation=pair(self.dilation, 2, "dilation"),
            groups=self.groups,
            padding=pair(self.padding, 2, "padding"),
            padding_out=pair(self.padding_out, 2, "padding_out"),
        )


class ConvTranspose2d(Module):
    """2-D transposed convolution.

    Shapes: `[batch, channels_in, h, w]` -> `[batch, channels_out, h', w']`, per dim
    `(size - 1) * stride - 2 * padding + dilation * (kernel - 1) + padding_out + 1`.
    """

    weight: Param
    bias: Param | None = None
    stride: list[int] = [1, 1]
    kernel_size: list[int] = [1, 1]
    dilation: list[int] = [1, 1]
    groups: int = 1
    padding: list[int] = [0, 0]
    padding_out: list[int] = [0, 0]

    def forward(self, x: Tensor) -> Tensor:
        return F.conv_transpose2d(
            x,
            self.weight.val(),
            None if self.bias is None else self.bias.val(),
            stride=self.stride,
            padding=self.padding,
            padding_out=self.padding_out,
            dilation=self.dilation,
            groups=self.groups,
        )
