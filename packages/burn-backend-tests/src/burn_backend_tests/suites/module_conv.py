"""Conformance: convolution-family forward ops through `burn_tensor.module` (the user path).

conv1d, conv2d, conv_transpose1d, conv_transpose2d and unfold4d against the float64 references of
`reference.conv`, over strides, asymmetric padding (also beyond half the kernel and beyond the kernel),
dilation, groups (depthwise too), output padding, bias or none, non-square and 1x1 kernels, an
empty batch, non-contiguous inputs, and shapes that reach a backend's fast paths (NdArray: the
stride-1 input-gradient conv and Winograd F(2x2, 3x3) for 3x3 stride-1 convs with >= 32 input and
>= 16 output channels and outputs >= 14, odd sizes and several batch chunks included). The case
tables are shared with the backward-primitive tests of `suites.module_conv_grad`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from burn_tensor import ConvOptions, ConvTransposeOptions, Float, module

from .._ctx import sample
from ..reference import conv as ref


@dataclass(frozen=True)
class Conv:
    """A conv2d case: x [n, c_in, *hw], weight [c_out, c_in / groups, *k]."""

    n: int
    c_in: int
    c_out: int
    hw: tuple
    k: tuple
    stride: tuple = (1, 1)
    padding: tuple = (0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    bias: bool = True
    layout: str = "contiguous"

    @property
    def options(self) -> ConvOptions:
        return ConvOptions(self.stride, self.padding, self.dilation, self.groups)

    @property
    def shapes(self):
        return (self.n, self.c_in, *self.hw), (self.c_out, self.c_in // self.groups, *self.k)


@dataclass(frozen=True)
class ConvT:
    """A conv_transpose2d case: x [n, c_in, *hw], weight [c_in, c_out / groups, *k]."""

    n: int
    c_in: int
    c_out: int
    hw: tuple
    k: tuple
    stride: tuple = (1, 1)
    padding: tuple = (0, 0)
    padding_out: tuple = (0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    bias: bool = True
    layout: str = "contiguous"

    @property
    def options(self) -> ConvTransposeOptions:
        o = self
        return ConvTransposeOptions(o.stride, o.padding, o.padding_out, o.dilation, o.groups)

    @property
    def shapes(self):
        return (self.n, self.c_in, *self.hw), (self.c_in, self.c_out // self.groups, *self.k)


C, T = Conv, ConvT
CONV2D = {
    "3x3_pad1": C(2, 3, 4, (7, 6), (3, 3), padding=(1, 1)),
    # stride 1, dilation 1: NdArray's input gradient is a forward conv ("fast" below)
    "fast_asym_pad": C(1, 2, 3, (6, 7), (3, 3), padding=(0, 1)),
    "fast_pad_gt_half_kernel": C(
        2, 2, 4, (5, 6), (3, 3), padding=(2, 1), bias=False, layout="permuted"
    ),
    "fast_nonsquare_groups": C(1, 4, 6, (6, 5), (2, 4), padding=(1, 3), groups=2, layout="flipped"),
    "pad_beyond_kernel": C(1, 2, 3, (4, 5), (3, 2), padding=(3, 1)),
    "stride_dilation_groups": C(1, 4, 6, (8, 7), (3, 2), (2, 1), (1, 2), (1, 2), 2),
    "dilation_stride1": C(
        2, 3, 2, (7, 8), (3, 3), padding=(2, 1), dilation=(2, 1), layout="strided"
    ),
    "depthwise": C(2, 4, 4, (9, 9), (3, 3), (2, 2), (0, 1), (2, 2), 4, bias=False),
    "depthwise_multiplier": C(1, 3, 6, (6, 6), (3, 3), (1, 2), (1, 1), groups=3, layout="strided"),
    "1x1": C(1, 2, 3, (5, 5), (1, 1)),
    "1x1_stride_pad": C(2, 3, 2, (5, 6), (1, 1), (2, 3), (1, 0), bias=False, layout="permuted"),
    "nonsquare_stride3": C(1, 2, 2, (6, 8), (2, 4), (3, 2), (1, 2), bias=False),
    "kernel_covers_input": C(1, 2, 2, (3, 2), (3, 2)),
    "expanded_batch": C(3, 2, 3, (5, 4), (2, 2), padding=(1, 0), layout="expanded"),
    "empty_batch": C(0, 4, 6, (6, 5), (3, 3), padding=(1, 2), groups=2),
    "empty_batch_stride2": C(0, 2, 3, (5, 5), (2, 2), stride=(2, 2), bias=False),
    # Winograd: odd output rows (15), 8 images (several batch chunks), and its input gradient
    # (32 -> 32 channels, 15x14) takes Winograd too.
    "winograd_odd_chunks": C(8, 32, 32, (15, 14), (3, 3), padding=(1, 2), layout="permuted"),
    "winograd_even_nobias": C(1, 32, 16, (14, 16), (3, 3), padding=(1, 1), bias=False),
    "winograd_empty_batch": C(0, 32, 32, (14, 14), (3, 3), padding=(1, 1)),
    # as many channels and pixels as Winograd needs, but one property it cannot compute
    "near_winograd_dilated": C(1, 32, 16, (16, 15), (3, 3), padding=(2, 1), dilation=(2, 1)),
    "near_winograd_groups": C(1, 32, 32, (15, 16), (3, 3), padding=(1, 0), groups=2),
    "near_winograd_stride": C(1, 32, 16, (16, 16), (3, 3), (1, 2), (1, 1), bias=False),
    "near_winograd_3x2": C(1, 32, 16, (15, 16), (3, 2), padding=(1, 1)),
}
CONV_T2D = {
    "3x3_pad1": T(2, 3, 4, (4, 5), (3, 3), padding=(1, 1)),
    "stride_out_pad_groups": T(1, 4, 6, (3, 4), (3, 2), (2, 3), (1, 0), (1, 2), (1, 2), 2),
    "out_pad_ge_stride": T(1, 2, 2, (3, 3), (3, 3), (1, 1), (1, 1), (1, 1), (2, 2), bias=False),
    "out_pad_one_dim": T(2, 3, 2, (4, 3), (2, 3), (1, 2), (0, 2), (1, 1), (3, 1), layout="flipped"),
    "depthwise_k2_s2": T(2, 4, 4, (3, 3), (2, 2), (2, 2), groups=4, layout="permuted"),
    "1x1": T(1, 2, 3, (2, 3), (1, 1), bias=False),
    "1x1_stride_out_pad": T(1, 2, 2, (3, 2), (1, 1), (2, 3), padding_out=(1, 2)),
    "pad_gt_half_kernel": T(1, 2, 3, (4, 5), (3, 3), (2, 2), (2, 1), (1, 0), layout="strided"),
    "nonsquare_dilated": T(2, 2, 4, (3, 4), (2, 3), (1, 2), (0, 2), (0, 1), (2, 1), 2),
    "expanded_batch": T(3, 2, 2, (3, 3), (3, 3), (2, 2), (1, 1), (1, 1), layout="expanded"),
    "empty_batch": T(0, 4, 6, (3, 4), (3, 3), (2, 1), (1, 1), (1, 0), groups=2),
    # input gradient = a stride-1 3x3 conv over 32 channels of a 14x13 map: Winograd on NdArray
    "winograd_x_grad": T(2, 16, 32, (14, 15), (3, 3), padding=(1, 2), bias=False),
}
# (n, c_in, c_out, length, k, stride, padding, dilation, groups, bias, layout)
CONV1D = {
    "stride_dilation_groups": (2, 4, 6, 11, 3, 2, 1, 2, 2, True, "contiguous"),
    "pad_gt_half_kernel": (1, 2, 3, 5, 3, 1, 2, 1, 1, False, "flipped"),
    "1x1": (2, 3, 2, 4, 1, 1, 0, 1, 1, True, "permuted"),
    "depthwise_stride3": (1, 3, 3, 8, 2, 3, 1, 1, 3, True, "strided"),
    "empty_batch": (0, 2, 4, 6, 3, 1, 1, 1, 2, True, "contiguous"),
}
# (n, c_in, c_out, length, k, stride, padding, padding_out, dilation, groups, bias, layout)
CONV_T1D = {
    "stride_out_pad_groups": (2, 4, 6, 5, 3, 2, 1, 1, 1, 2, True, "contiguous"),
    "dilated_out_pad": (1, 2, 3, 4, 3, 1, 1, 1, 2, 1, False, "flipped"),
    "1x1": (1, 2, 2, 3, 1, 1, 0, 0, 1, 1, True, "permuted"),
    "empty_batch": (0, 2, 2, 4, 2, 2, 0, 1, 1, 2, True, "contiguous"),
}
# (n, c, hw, kernel, stride, padding, dilation, layout)
UNFOLD = {
    "k2": (2, 3, (6, 5), (2, 2), (1, 1), (0, 0), (1, 1), "contiguous"),
    "asym_stride_dilation": (2, 3, (6, 5), (3, 2), (2, 1), (1, 0), (1, 2), "permuted"),
    "1x1_stride": (2, 3, (6, 5), (1, 1), (2, 3), (0, 1), (1, 1), "strided"),
    "pad_beyond_kernel": (1, 2, (4, 5), (2, 3), (1, 2), (3, 1), (2, 1), "flipped"),
    "empty_batch": (0, 2, (4, 4), (2, 2), (1, 1), (1, 1), (1, 1), "contiguous"),
}


def conv_inputs(burn, shapes, c_out, bias, layout, seed=0):
    """(tensors, float64 references) of x, weight and bias (always built; None when unused)."""
    x_t, x = burn.view_input(sample(shapes[0], "unit", seed), Float, layout)
    w_t, w = burn.view_input(sample(shapes[1], "unit", seed + 1), Float, layout)
    b_t, b = burn.view_input(sample((c_out,), "unit", seed + 2), Float, layout)
    return (x_t, w_t, b_t if bias else None), (x, w, b if bias else None)


def assert_close_scaled(burn, t, expected):
    """`burn.assert_close` with the absolute tolerance scaled by the largest |expected|: the
    results are sums of many products, whose rounding grows with their magnitude."""
    expected = np.asarray(expected, np.float64)
    scale = float(np.max(np.abs(expected), initial=1.0))
    tol = burn.loose.set_absolute(max(burn.loose.absolute, burn.loose.relative * scale))
    burn.assert_close(t, expected, tol)


def assert_unchanged(burn, tensors, refs):
    """Ops must not write their inputs."""
    for t, r in zip(tensors, refs):
        if t is not None:
            burn.assert_equal(t, r)


@pytest.mark.parametrize("name", list(CONV2D))
def test_conv2d(burn, name):
    c = CONV2D[name]
    (x_t, w_t, b_t), (x, w, b) = conv_inputs(burn, c.shapes, c.c_out, c.bias, c.layout)
    out = module.conv2d(x_t, w_t, b_t, list(c.stride), list(c.padding), list(c.dilation), c.groups)
    assert_close_scaled(burn, out, ref.conv2d(x, w, b, c.stride, c.padding, c.dilation, c.groups))
    assert_unchanged(burn, (x_t, w_t, b_t), (x, w, b))


@pytest.mark.parametrize("name", ["3x3_pad1", "stride_dilation_groups"])
def test_conv2d_options_record(burn, name):
    """`options=ConvOptions(...)` is the same call as the keyword options."""
    c = CONV2D[name]
    (x_t, w_t, b_t), (x, w, b) = conv_inputs(burn, c.shapes, c.c_out, c.bias, c.layout)
    out = module.conv2d(x_t, w_t, b_t, options=c.options)
    assert_close_scaled(burn, out, ref.conv2d(x, w, b, c.stride, c.padding, c.dilation, c.groups))


@pytest.mark.parametrize("name", list(CONV_T2D))
def test_conv_transpose2d(burn, name):
    c = CONV_T2D[name]
    (x_t, w_t, b_t), (x, w, b) = conv_inputs(burn, c.shapes, c.c_out, c.bias, c.layout)
    out = module.conv_transpose2d(
        x_t,
        w_t,
        b_t,
        list(c.stride),
        list(c.padding),
        list(c.padding_out),
        list(c.dilation),
        c.groups,
    )
    expected = ref.conv_transpose2d(
        x, w, b, c.stride, c.padding, c.padding_out, c.dilation, c.groups
    )
    assert_close_scaled(burn, out, expected)
    assert_unchanged(burn, (x_t, w_t, b_t), (x, w, b))


@pytest.mark.parametrize("name", list(CONV1D))
def test_conv1d(burn, name):
    n, ci, co, length, k, s, p, d, g, bias, layout = CONV1D[name]
    shapes = (n, ci, length), (co, ci // g, k)
    (x_t, w_t, b_t), (x, w, b) = conv_inputs(burn, shapes, co, bias, layout)
    out = module.conv1d(x_t, w_t, b_t, s, p, d, g)
    assert_close_scaled(burn, out, ref.conv1d(x, w, b, s, p, d, g))
    assert_unchanged(burn, (x_t, w_t, b_t), (x, w, b))


@pytest.mark.parametrize("name", list(CONV_T1D))
def test_conv_transpose1d(burn, name):
    n, ci, co, length, k, s, p, po, d, g, bias, layout = CONV_T1D[name]
    shapes = (n, ci, length), (ci, co // g, k)
    (x_t, w_t, b_t), (x, w, b) = conv_inputs(burn, shapes, co, bias, layout)
    out = module.conv_transpose1d(x_t, w_t, b_t, s, p, po, d, g)
    assert_close_scaled(burn, out, ref.conv_transpose1d(x, w, b, s, p, po, d, g))
    assert_unchanged(burn, (x_t, w_t, b_t), (x, w, b))


@pytest.mark.parametrize("name", list(UNFOLD))
def test_conv_unfold4d(burn, name):
    n, c, hw, k, s, p, d, layout = UNFOLD[name]
    x_t, x = burn.view_input(sample((n, c, *hw), "unit"), Float, layout)
    out = module.unfold4d(x_t, list(k), list(s), list(p), list(d))
    burn.assert_close(out, ref.unfold4d(x, k, s, p, d))
    assert_unchanged(burn, (x_t,), (x,))
