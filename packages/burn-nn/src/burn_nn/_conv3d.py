"""`Conv3d` / `ConvTranspose3d` and their configs (Burn's `nn::conv::{Conv3d, ConvTranspose3d}`).

Layout `[batch, channels, depth, height, width]`; weights `[out, in / groups, kd, kh, kw]`
(Conv3d) and `[in, out / groups, kd, kh, kw]` (ConvTranspose3d), as Burn and PyTorch, so
state dicts load unchanged. Initialization as the 2-D modules (Kaiming uniform over the fan-in).
"""

from __future__ import annotations

from burn_tensor import Tensor
from burn_tensor import module as F

from ._config import config
from ._conv import _check_groups, _conv_params, _padded
from ._conv_transpose import _params as _transposed_params
from ._initializer import Initializer, KaimingUniform, Zeros
from ._module import Module
from ._padding import PaddingConfig3d
from ._param import Param
from ._util import check_initializer, check_sizes, device_or_default, pair


@config
class Conv3dConfig:
    """Config of `Conv3d`: `channels=[in, out]`, `kernel_size=[kd, kh, kw]`.

    Example:
        >>> Conv3dConfig([2, 4], [3, 3, 3]).with_padding(PaddingConfig3d.Same).stride
        [1, 1, 1]
    """

    channels: list[int]
    kernel_size: list[int]
    stride: list[int] = [1, 1, 1]
    dilation: list[int] = [1, 1, 1]
    groups: int = 1
    padding: PaddingConfig3d = PaddingConfig3d.Valid
    bias: bool = True
    initializer: Initializer = KaimingUniform()

    def init(self, device=None) -> Conv3d:
        device = device_or_default(device)
        c_in, c_out = pair(self.channels, 2, "channels")
        kernel = pair(self.kernel_size, 3, "kernel_size")
        stride, dilation = pair(self.stride, 3, "stride"), pair(self.dilation, 3, "dilation")
        check_sizes("Conv3dConfig", channels=[c_in, c_out], kernel_size=kernel, stride=stride,
                    dilation=dilation)
        check_initializer("Conv3dConfig", self.initializer)
        _check_groups("Conv3dConfig", c_in, c_out, self.groups)
        shape = [c_out, c_in // self.groups, *kernel]
        w, b = _conv_params(
            self.initializer, shape, c_in, c_out, self.groups, kernel, self.bias, device
        )
        return Conv3d(weight=w, bias=b, stride=stride, kernel_size=kernel, dilation=dilation,
                      groups=self.groups, padding=PaddingConfig3d.coerce(self.padding))

    def init_with(self, record, device=None) -> Conv3d:
        return self.replace(initializer=Zeros()).init(device).load_record(record)


class Conv3d(Module):
    """3-D convolution.

    Shapes: `[batch, channels_in, d, h, w]` -> `[batch, channels_out, d', h', w']`.

    Example:
        >>> from burn_ndarray import NdArray
        >>> d = NdArray().device()
        >>> conv = Conv3dConfig([1, 4], [3, 3, 3]).with_padding(PaddingConfig3d.Same).init(d)
        >>> conv.forward(Tensor.ones([2, 1, 5, 6, 7], d)).dims()
        [2, 4, 5, 6, 7]
    """

    weight: Param
    bias: Param | None = None
    stride: list[int] = [1, 1, 1]
    kernel_size: list[int] = [1, 1, 1]
    dilation: list[int] = [1, 1, 1]
    groups: int = 1
    padding: PaddingConfig3d = PaddingConfig3d.Valid

    def forward(self, x: Tensor) -> Tensor:
        x, sym = _padded(x, self.padding, self.kernel_size, self.stride, self.dilation)
        return F.conv3d(
            x,
            self.weight.val(),
            None if self.bias is None else self.bias.val(),
            stride=self.stride,
            padding=sym,
            dilation=self.dilation,
            groups=self.groups,
        )


@config
class ConvTranspose3dConfig:
    """Config of `ConvTranspose3d`: `channels=[in, out]`, `kernel_size=[kd, kh, kw]`.

    Example:
        >>> ConvTranspose3dConfig([2, 4], [3, 3, 3]).padding_out
        [0, 0, 0]
    """

    channels: list[int]
    kernel_size: list[int]
    stride: list[int] = [1, 1, 1]
    dilation: list[int] = [1, 1, 1]
    groups: int = 1
    padding: list[int] = [0, 0, 0]
    padding_out: list[int] = [0, 0, 0]
    bias: bool = True
    initializer: Initializer = KaimingUniform()

    def init(self, device=None) -> ConvTranspose3d:
        device = device_or_default(device)
        c_in, c_out = pair(self.channels, 2, "channels")
        kernel = pair(self.kernel_size, 3, "kernel_size")
        stride, dilation = pair(self.stride, 3, "stride"), pair(self.dilation, 3, "dilation")
        check_sizes("ConvTranspose3dConfig", channels=[c_in, c_out], kernel_size=kernel,
                    stride=stride, dilation=dilation)
        check_initializer("ConvTranspose3dConfig", self.initializer)
        shape = [c_in, c_out // self.groups, *kernel]
        w, b = _transposed_params(
            self.initializer, shape, c_in, c_out, self.groups, kernel, self.bias, device
        )
        return ConvTranspose3d(
            weight=w, bias=b, stride=stride, kernel_size=kernel, dilation=dilation,
            groups=self.groups, padding=pair(self.padding, 3, "padding"),
            padding_out=pair(self.padding_out, 3, "padding_out"),
        )

    def init_with(self, record, device=None) -> ConvTranspose3d:
        return self.replace(initializer=Zeros()).init(device).load_record(record)


class ConvTranspose3d(Module):
    """3-D transposed convolution.

    Shapes: `[batch, channels_in, d, h, w]` -> `[batch, channels_out, d', h', w']`, per dim
    `(size - 1) * stride - 2 * padding + dilation * (kernel - 1) + padding_out + 1`.
    """

    weight: Param
    bias: Param | None = None
    stride: list[int] = [1, 1, 1]
    kernel_size: list[int] = [1, 1, 1]
    dilation: list[int] = [1, 1, 1]
    groups: int = 1
    padding: list[int] = [0, 0, 0]
    padding_out: list[int] = [0, 0, 0]

    def forward(self, x: Tensor) -> Tensor:
        return F.conv_transpose3d(
            x,
            self.weight.val(),
            None if self.bias is None else self.bias.val(),
            stride=self.stride,
            padding=self.padding,
            padding_out=self.padding_out,
            dilation=self.dilation,
            groups=self.groups,
        )
