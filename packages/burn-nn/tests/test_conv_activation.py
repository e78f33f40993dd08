"""`Conv2d.forward(x, activation=...)`: the conv and its activation as one backend op
(`module.conv2d_activation`), equal to the forward followed by the activation function on
NdArray (whose kernels fuse it) and on a backend running the op's default (Autodiff, whose
gradients flow through both parts); asymmetric Same padding; bad activations named."""

from __future__ import annotations

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_ndarray import NdArray
from burn_nn import Conv2dConfig, PaddingConfig2d
from burn_tensor import Tensor, TensorCheckError, activation

ACTS = ["relu", "hard_swish", ("hard_sigmoid", 0.25, 0.4), "silu", "sigmoid"]


def _unfused(out, act):
    name, *params = (act,) if isinstance(act, str) else act
    return getattr(activation, name)(out, *params)


@pytest.mark.parametrize("act", ACTS, ids=str)
@pytest.mark.parametrize("groups, stride", [(1, 1), (1, 2), (4, 1), (8, 2)])
def test_forward_with_activation_equals_forward_then_activation(act, groups, stride):
    d = NdArray(num_threads=1).device()
    conv = (
        Conv2dConfig([8, 16], [3, 3], stride=[stride, stride], groups=groups)
        .with_padding(PaddingConfig2d.Same)  # stride 2 on 48: uneven pads applied by hand
        .init(d)
    )
    data = np.random.default_rng(1).standard_normal((1, 8, 48, 48)).astype(np.float32)
    x = Tensor.from_data(data, d)
    fused = conv.forward(x, activation=act).to_data().array
    plain = _unfused(conv.forward(x), act).to_data().array
    assert fused.shape == plain.shape
    np.testing.assert_array_equal(fused, plain)


def test_gradients_flow_through_the_default():
    """Autodiff runs the op's default (conv2d, then the activation op): the input gradient is
    the unfused one."""
    d = Autodiff(NdArray(float_dtype="float64")).device()
    conv = Conv2dConfig([2, 3], [3, 3]).init(d)
    data = np.random.default_rng(2).standard_normal((1, 2, 6, 6))
    x1 = Tensor.from_data(data, d).require_grad()
    g1 = x1.grad(conv.forward(x1, activation="silu").sum().backward())
    x2 = Tensor.from_data(data, d).require_grad()
    g2 = x2.grad(activation.silu(conv.forward(x2)).sum().backward())
    np.testing.assert_array_equal(g1.to_data().array, g2.to_data().array)
    assert np.abs(g1.to_data().array).max() > 0


@pytest.mark.parametrize(
    "bad, why",
    [
        ("gelu", "expected one of"),
        (("relu", 1.0), "takes 0 parameters"),
        (("hard_sigmoid", 0.2), "takes 2 parameters"),
        (("hard_sigmoid", "a", 0.5), "not numbers"),
    ],
)
def test_bad_activation_is_named(bad, why):
    d = NdArray().device()
    conv = Conv2dConfig([2, 3], [1, 1]).init(d)
    with pytest.raises(TensorCheckError, match=why):
        conv.forward(Tensor.ones([1, 2, 4, 4], d), activation=bad)


def test_under_autocast_the_activation_follows_the_widened_bias_add():
    """Autocast adds the bias after the half-precision conv, in the input dtype: the fused call
    then runs the two parts separately, so the activation sees the biased output (a fused
    kernel would have applied it before the bias)."""
    from burn_tensor import autocast

    d = NdArray(num_threads=1).device()
    conv = Conv2dConfig([4, 6], [3, 3]).init(d)
    data = np.random.default_rng(3).standard_normal((1, 4, 9, 9)).astype(np.float32)
    x = Tensor.from_data(data, d)
    with autocast("float16"):
        fused = conv.forward(x, activation="relu").to_data().array
        plain = activation.relu(conv.forward(x)).to_data().array
    assert fused.dtype == np.float32
    np.testing.assert_array_equal(fused, plain)
    assert (fused == 0).any() and (fused > 0).any()
