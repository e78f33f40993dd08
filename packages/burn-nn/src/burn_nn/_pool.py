"""Pooling modules: MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool1d/2d (Burn's `nn::pool`).

`stride`/`strides` default to the kernel size (Burn HEAD); `ceil_mode=True` is done by padding the
end of the input (max: with -inf) so the last partial window is kept; average pools then divide
each window by its own count (`_avg_pool_ceil`).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from burn_tensor import Tensor
from burn_tensor import module as F

from ._config import config
from ._module import Module
from ._padding import PaddingConfig1d, PaddingConfig2d, pad_input, split_pads
from ._util import pair


def _resolve(obj, field: str, default) -> None:
    if getattr(obj, field) is None:
        object.__setattr__(obj, field, default)


def _ceil_extra(sizes, pads, kernel, stride, dilation):
    extra = []
    for size, (a, b), k, s, d in zip(sizes, pads, kernel, stride, dilation):
        span = size + a + b - d * (k - 1) - 1
        out_floor, out_ceil = span // s + 1, math.ceil(span / s) + 1
        if (
            out_ceil > out_floor and (out_ceil - 1) * s >= size + a
        ):  # torch: last window starts inside
            out_ceil -= 1
        extra.append(max((out_ceil - 1) * s + d * (k - 1) + 1 - (size + a + b), 0))
    return extra


def _prepare(x, padding, kernel, stride, dilation, ceil_mode, fill):
    pads = padding.pads(x.dims()[2:], kernel, stride, dilation)
    if ceil_mode:
        more = _ceil_extra(x.dims()[2:], pads, kernel, stride, dilation)
        pads = [(a, b + m) for (a, b), m in zip(pads, more)]
    sym, extra = split_pads(pads)
    return (x if extra is None else pad_input(x, extra, fill)), sym


@config
class MaxPool1dConfig:
    """Config of `MaxPool1d` (`stride` defaults to `kernel_size`)."""

    kernel_size: int
    stride: int | None = None
    padding: PaddingConfig1d = PaddingConfig1d.Valid
    dilation: int = 1
    ceil_mode: bool = False

    def __post_init__(self):
        _resolve(self, "stride", self.kernel_size)

    def init(self, device=None) -> MaxPool1d:
        return MaxPool1d(**{f.name: getattr(self, f.name) for f in dataclasses.fields(self)})


class MaxPool1d(Module):
    """Shapes: `[batch, channels, length]` -> `[batch, channels, length_out]`.

    Example:
        >>> from burn_ndarray import NdArray
        >>> MaxPool1dConfig(2).init().forward(Tensor.ones([1, 1, 6], NdArray().device())).dims()
        [1, 1, 3]
    """

    kernel_size: int
    stride: int
    padding: PaddingConfig1d = PaddingConfig1d.Valid
    dilation: int = 1
    ceil_mode: bool = False

    def forward(self, x: Tensor) -> Tensor:
        x, sym = _prepare(
            x,
            PaddingConfig1d.coerce(self.padding),
            [self.kernel_size],
            [self.stride],
            [self.dilation],
            self.ceil_mode,
            float("-inf"),
        )
        return F.max_pool1d(x, self.kernel_size, self.stride, sym, self.dilation)


@config
class MaxPool2dConfig:
    """Config of `MaxPool2d` (`strides` defaults to `kernel_size`).

    Example:
        >>> MaxPool2dConfig([2, 2]).strides
        [2, 2]
    """

    kernel_size: list[int]
    strides: list[int] | None = None
    padding: PaddingConfig2d = PaddingConfig2d.Valid
    dilation: list[int] = [1, 1]
    ceil_mode: bool = False

    def __post_init__(self):
        _resolve(self, "strides", list(self.kernel_size))

    def with_stride(self, stride):
        return self.with_strides(stride)

    def init(self, device=None) -> MaxPool2d:
        return MaxPool2d(
            kernel_size=pair(self.kernel_size, 2, "kernel_size"),
            strides=pair(self.strides, 2, "strides"),
            padding=self.padding,
            dilation=pair(self.dilation, 2, "dilation"),
            ceil_mode=self.ceil_mode,
        )


class MaxPool2d(Module):
    """Shapes: `[batch, channels, h, w]` -> `[batch, channels, h', w']`.

    Example:
        >>> from burn_ndarray import NdArray
        >>> MaxPool2dConfig([2, 2]).init().forward(Tensor.ones([1, 1, 4, 6], NdArray().device())).dims()
        [1, 1, 2, 3]
    """

    kernel_size: list[int]
    strides: list[int]
    padding: PaddingConfig2d = PaddingConfig2d.Valid
    dilation: list[int] = [1, 1]
    ceil_mode: bool = False

    def forward(self, x: Tensor) -> Tensor:
        x, sym = _prepare(
            x,
            PaddingConfig2d.coerce(self.padding),
            self.kernel_size,
            self.strides,
            self.dilation,
            self.ceil_mode,
            float("-inf"),
        )
        return F.max_pool2d(x, self.kernel_size, self.strides, sym, self.dilation)


def _avg_pool_ceil(x, padding, kernel, stride, count_include_pad):
    """Average pool with ceil_mode=True (torch's rule, Burn's `ceil_mode`), or None when the
    ceil and floor output sizes agree (the plain path then runs).

    The last window may run past the padded input: the input is padded explicitly (zeros) so
    every window fits, windows are summed (an average pool times the kernel area), and each
    output is divided by its own count: with count_include_pad the window clipped to the padded
    input (the part past it never counts), else only its input elements.
    """
    sizes = x.dims()[2:]
    pads = padding.pads(sizes, kernel, stride, [1] * len(sizes))
    more = _ceil_extra(sizes, pads, kernel, stride, [1] * len(sizes))
    if not any(more):
        return None
    full = [(a, b + m) for (a, b), m in zip(pads, more)]
    xp = pad_input(x, full, 0.0)
    n = len(sizes)
    summed = F.avg_pool2d(xp, kernel, stride, [0, 0], True) if n == 2 else F.avg_pool1d(
        xp, kernel[0], stride[0], [0], True
    )
    summed = summed.mul_scalar(float(math.prod(kernel)))
    counts = None
    for size, (a, b), k, s, o in zip(sizes, pads, kernel, stride, summed.dims()[2:]):
        start = np.arange(o) * s - a
        if count_include_pad:
            c = np.minimum(start + k, size + b) - start
        else:
            c = np.minimum(start + k, size) - np.maximum(start, 0)
        counts = c if counts is None else np.multiply.outer(counts, c)
    div = Tensor.from_data(counts.astype(np.float64), x.device, x.dtype)
    return summed.div(div.reshape([1, 1, *counts.shape]))


@config
class AvgPool1dConfig:
    """Config of `AvgPool1d` (`stride` defaults to `kernel_size`)."""

    kernel_size: int
    stride: int | None = None
    padding: PaddingConfig1d = PaddingConfig1d.Valid
    count_include_pad: bool = True
    ceil_mode: bool = False

    def __post_init__(self):
        _resolve(self, "stride", self.kernel_size)

    def init(self, device=None) -> AvgPool1d:
        return AvgPool1d(**{f.name: getattr(self, f.name) for f in dataclasses.fields(self)})


class AvgPool1d(Module):
    """Shapes: `[batch, channels, length]` -> `[batch, channels, length_out]`."""

    kernel_size: int
    stride: int
    padding: PaddingConfig1d = PaddingConfig1d.Valid
    count_include_pad: bool = True
    ceil_mode: bool = False

    def forward(self, x: Tensor) -> Tensor:
        if self.ceil_mode:
            out = _avg_pool_ceil(
                x,
                PaddingConfig1d.coerce(self.padding),
                [self.kernel_size],
                [self.stride],
                self.count_include_pad,
            )
            if out is not None:
                return out
        x, sym = _prepare(
            x,
            PaddingConfig1d.coerce(self.padding),
            [self.kernel_size],
            [self.stride],
            [1],
            False,
            0.0,
        )
        return F.avg_pool1d(x, self.kernel_size, self.stride, sym, self.count_include_pad)


@config
class AvgPool2dConfig:
    """Config of `AvgPool2d` (`strides` defaults to `kernel_size`)."""

    kernel_size: list[int]
    strides: list[int] | None = None
    padding: PaddingConfig2d = PaddingConfig2d.Valid
    count_include_pad: bool = True
    ceil_mode: bool = False

    def __post_init__(self):
        _resolve(self, "strides", list(self.kernel_size))

    def with_stride(self, stride):
        return self.with_strides(stride)

    def init(self, device=None) -> AvgPool2d:
        return AvgPool2d(
            kernel_size=pair(self.kernel_size, 2, "kernel_size"),
            strides=pair(self.strides, 2, "strides"),
            padding=self.padding,
            count_include_pad=self.count_include_pad,
            ceil_mode=self.ceil_mode,
        )


class AvgPool2d(Module):
    """Shapes: `[batch, channels, h, w]` -> `[batch, channels, h', w']`."""

    kernel_size: list[int]
    strides: list[int]
    padding: PaddingConfig2d = PaddingConfig2d.Valid
    count_include_pad: bool = True
    ceil_mode: bool = False

    def forward(self, x: Tensor) -> Tensor:
        if self.ceil_mode:
            out = _avg_pool_ceil(
                x,
                PaddingConfig2d.coerce(self.padding),
                self.kernel_size,
                self.strides,
                self.count_include_pad,
            )
            if out is not None:
                return out
        x, sym = _prepare(
            x,
            PaddingConfig2d.coerce(self.padding),
            self.kernel_size,
            self.strides,
            [1, 1],
            False,
            0.0,
        )
        return F.avg_pool2d(x, self.kernel_size, self.strides, sym, self.count_include_pad)


@config
class AdaptiveAvgPool1dConfig:
    """Config of `AdaptiveAvgPool1d`."""

    output_size: int

    def init(self, device=None) -> AdaptiveAvgPool1d:
        return AdaptiveAvgPool1d(output_size=self.output_size)


class AdaptiveAvgPool1d(Module):
    """Shapes: `[batch, channels, length]` -> `[batch, channels, output_size]`."""

    output_size: int

    def forward(self, x: Tensor) -> Tensor:
        return F.adaptive_avg_pool1d(x, self.output_size)


@config
class AdaptiveAvgPool2dConfig:
    """Config of `AdaptiveAvgPool2d`.

    Example:
        >>> AdaptiveAvgPool2dConfig([8, 8]).init().output_size
        [8, 8]
    """

    output_size: list[int]

    def init(self, device=None) -> AdaptiveAvgPool2d:
        return AdaptiveAvgPool2d(output_size=pair(self.output_size, 2, "output_size"))


class AdaptiveAvgPool2d(Module):
    """Shapes: `[batch, channels, h, w]` -> `[batch, channels, *output_size]`."""

    output_size: list[int]

    def forward(self, x: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(x, self.output_size)
