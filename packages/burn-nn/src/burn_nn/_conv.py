"""`Conv1d` / `Conv2d` and their configs (Burn's `nn::conv`)."""

from __future__ import annotations

import math

from burn_tensor import Tensor
from burn_tensor import activation as activation_fns
from burn_tensor import module as F

from ._config import config
from ._initializer import Initializer, KaimingUniform, Zeros
from ._module import Module
from ._conv_plan import conv_plan
from ._padding import PaddingConfig1d, PaddingConfig2d, pad_input, split_pads
from ._param import Param
from ._util import check_initializer, check_sizes, device_or_default, pair


def _check_groups(name: str, c_in: int, c_out: int, groups: int) -> None:
    if groups < 1 or c_in % groups or c_out % groups:
        raise ValueError(
            f"{name}: channels [{c_in}, {c_out}] must both be divisible by groups={groups}"
        )


def _conv_params(initializer, shape, c_in, c_out, groups, kernel, bias, device):
    k = math.prod(kernel)
    fan_in, fan_out = c_in // groups * k, c_out // groups * k
    weight = initializer.init_with(shape, fan_in, fan_out, device)
    b = initializer.init_with([c_out], fan_in, fan_out, device) if bias else None
    return weight, b


def _padded(x: Tensor, padding, kernel, stride, dilation) -> tuple[Tensor, list[int]]:
    pads = padding.pads(x.dims()[2:], kernel, stride, dilation)
    sym, extra = split_pads(pads)
    return (x if extra is None else pad_input(x, extra)), sym


def _conv(fn, x: Tensor, m, act=None) -> Tensor:
    """`fn` (F.conv1d / F.conv2d) of module `m` on `x`, its options from `conv_plan`; `act`:
    a checked activation tuple (`F.activation_spec`) applied to it, through
    `F.conv2d_activation` (conv2d only)."""
    kernel, stride, dilation = m.kernel_size, m.stride, m.dilation
    if isinstance(kernel, int):  # Conv1d's fields are ints
        kernel, stride, dilation = [kernel], [stride], [dilation]
    plan = conv_plan(x, m.padding, kernel, stride, dilation, m.groups)
    w, b = m.weight.val(), None if m.bias is None else m.bias.val()
    if plan is None:  # fields the op must refuse: its own checks name them
        x, sym = _padded(x, m.padding, kernel, stride, dilation)
        out = fn(x, w, b, stride=stride, padding=sym, dilation=dilation, groups=m.groups)
        return out if act is None else getattr(activation_fns, act[0])(out, *act[1:])
    options, extra = plan
    x = x if extra is None else pad_input(x, extra)
    if act is None:
        return fn(x, w, b, options=options)
    return F.conv2d_activation(x, w, b, act, options=options)


@config
class Conv1dConfig:
    """Config of `Conv1d`: weight `[channels_out, channels_in / groups, kernel_size]`.

    Example:
        >>> Conv1dConfig(2, 4, 3).with_padding(PaddingConfig1d.Same).padding
        PaddingConfig1d.Same
    """

    channels_in: int
    channels_out: int
    kernel_size: int
    stride: int = 1
    dilation: int = 1
    groups: int = 1
    padding: PaddingConfig1d = PaddingConfig1d.Valid
    bias: bool = True
    initializer: Initializer = KaimingUniform()

    def init(self, device=None) -> Conv1d:
        device = device_or_default(device)
        check_sizes(
            "Conv1dConfig",
            channels_in=self.channels_in,
            channels_out=self.channels_out,
            kernel_size=self.kernel_size,
            stride=self.stride,
            dilation=self.dilation,
        )
        check_initializer("Conv1dConfig", self.initializer)
        _check_groups("Conv1dConfig", self.channels_in, self.channels_out, self.groups)
        shape = [self.channels_out, self.channels_in // self.groups, self.kernel_size]
        w, b = _conv_params(
            self.initializer,
            shape,
            self.channels_in,
            self.channels_out,
            self.groups,
            [self.kernel_size],
            self.bias,
            device,
        )
        return Conv1d(
            weight=w,
            bias=b,
            stride=self.stride,
            kernel_size=self.kernel_size,
            dilation=self.dilation,
            groups=self.groups,
            padding=PaddingConfig1d.coerce(self.padding),
        )

    def init_with(self, record, device=None) -> Conv1d:
        return self.replace(initializer=Zeros()).init(device).load_record(record)


class Conv1d(Module):
    """1-D convolution.

    Shapes: input `[batch, channels_in, length]` -> `[batch, channels_out, length_out]`.

    Example:
        >>> from burn_ndarray import NdArray
        >>> d = NdArray().device()
        >>> Conv1dConfig(2, 4, 3).init(d).forward(Tensor.ones([1, 2, 10], d)).dims()
        [1, 4, 8]
    """

    weight: Param
    bias: Param | None = None
    stride: int = 1
    kernel_size: int = 1
    dilation: int = 1
    groups: int = 1
    padding: PaddingConfig1d = PaddingConfig1d.Valid

    def forward(self, x: Tensor) -> Tensor:
        return _conv(F.conv1d, x, self)


@config
class Conv2dConfig:
    """Config of `Conv2d`: `channels=[in, out]`, `kernel_size=[kh, kw]`; weight
    `[out, in / groups, kh, kw]`.

    Example:
        >>> Conv2dConfig([1, 32], [3, 3]).with_padding(PaddingConfig2d.Same).stride
        [1, 1]
    """

    channels: list[int]
    kernel_size: list[int]
    stride: list[int] = [1, 1]
    dilation: list[int] = [1, 1]
    groups: int = 1
    padding: PaddingConfig2d = PaddingConfig2d.Valid
    bias: bool = True
    initializer: Initializer = KaimingUniform()

    def init(self, device=None) -> Conv2d:
        device = device_or_default(device)
        c_in, c_out = pair(self.channels, 2, "channels")
        kernel = pair(self.kernel_size, 2, "kernel_size")
        check_sizes(
            "Conv2dConfig",
            channels=[c_in, c_out],
            kernel_size=kernel,
            stride=pair(self.stride, 2, "stride"),
            dilation=pair(self.dilation, 2, "dilation"),
        )
        check_initializer("Conv2dConfig", self.initializer)
        _check_groups("Conv2dConfig", c_in, c_out, self.groups)
        shape = [c_out, c_in // self.groups, *kernel]
        w, b = _conv_params(
            self.initializer, shape, c_in, c_out, self.groups, kernel, self.bias, device
        )
        return Conv2d(
            weight=w,
            bias=b,
            stride=pair(self.stride, 2, "stride"),
            kernel_size=kernel,
            dilation=pair(self.dilation, 2, "dilation"),
            groups=self.groups,
            padding=PaddingConfig2d.coerce(self.padding),
        )

    def init_with(self, record, device=None) -> Conv2d:
        return self.replace(initializer=Zeros()).init(device).load_record(record)


class Conv2d(Module):
    """2-D convolution.

    Shapes: input `[batch, channels_in, height, width]` -> `[batch, channels_out, height', width']`.

    Example:
        >>> from burn_ndarray import NdArray
        >>> d = NdArray().device()
        >>> conv = Conv2dConfig([1, 8], [3, 3]).with_padding(PaddingConfig2d.Same).init(d)
        >>> conv.forward(Tensor.ones([2, 1, 28, 28], d)).dims()
        [2, 8, 28, 28]
    """

    weight: Param
    bias: Param | None = None
    stride: list[int] = [1, 1]
    kernel_size: list[int] = [1, 1]
    dilation: list[int] = [1, 1]
    groups: int = 1
    padding: PaddingConfig2d = PaddingConfig2d.Valid

    def forward(self, x: Tensor, activation=None) -> Tensor:
        """The convolution; with `activation` ("relu", "hard_swish", "silu", "sigmoid" or
        ("hard_sigmoid", alpha, beta)) that activation of it, as one backend op
        (`module.conv2d_activation`: NdArray applies it to each output block in its kernels)."""
        if activation is None:
            return _conv(F.conv2d, x, self)
        return _conv(F.conv2d, x, self, F.activation_spec(activation))
