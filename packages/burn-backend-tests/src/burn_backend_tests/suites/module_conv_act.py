"""Conformance: `conv2d_activation` (a conv2d and its activation as one op, through
`burn_tensor.module.conv2d_activation`) against the float64 conv reference followed by the
activation, for every activation it takes, over plain, depthwise and Winograd-shaped convs and
two shapes large enough for NdArray's fused kernels (its 1x1 GEMM tasks and depthwise kernel
apply the activation to each output block)."""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import module

from ..reference import conv as ref
from .module_conv import CONV2D, assert_close_scaled, assert_unchanged, conv_inputs
from .module_conv import Conv as C

CASES = {
    "3x3_pad1": CONV2D["3x3_pad1"],
    "depthwise": CONV2D["depthwise"],
    "winograd_even_nobias": CONV2D["winograd_even_nobias"],
    "fused_1x1": C(1, 16, 24, (32, 32), (1, 1)),
    "fused_depthwise_s2": C(1, 32, 32, (24, 25), (3, 3), (2, 2), (1, 1), groups=32),
}
ACTS = ["relu", "hard_swish", ("hard_sigmoid", 0.25, 0.375), "silu", "sigmoid"]


def _act64(y, act):
    """The activation in float64 numpy."""
    name, *params = (act,) if isinstance(act, str) else act
    if name == "relu":
        return np.maximum(y, 0.0)
    if name in ("silu", "sigmoid"):
        s = 1.0 / (1.0 + np.exp(-y))
        return y * s if name == "silu" else s
    alpha, beta = params if name == "hard_sigmoid" else (1.0 / 6.0, 0.5)
    h = np.clip(y * alpha + beta, 0.0, 1.0)
    return h if name == "hard_sigmoid" else y * h


@pytest.mark.parametrize("act", ACTS, ids=str)
@pytest.mark.parametrize("name", list(CASES))
def test_conv2d_activation(burn, name, act):
    c = CASES[name]
    (x_t, w_t, b_t), (x, w, b) = conv_inputs(burn, c.shapes, c.c_out, c.bias, c.layout)
    out = module.conv2d_activation(x_t, w_t, b_t, act, options=c.options)
    want = _act64(ref.conv2d(x, w, b, c.stride, c.padding, c.dilation, c.groups), act)
    assert_close_scaled(burn, out, want)
    assert_unchanged(burn, (x_t, w_t, b_t), (x, w, b))
