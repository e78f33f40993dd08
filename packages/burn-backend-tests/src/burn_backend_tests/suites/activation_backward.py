"""Conformance: the activation primitives' backward ops, and forward edge cases of the
parametrized ones (leaky_relu slopes, hard_sigmoid alpha/beta, prelu alpha shapes).

Backward ops are called on the backend with primitives (as Autodiff does), with inputs also fed
as non-contiguous views; references are the hand-derived derivatives in float64:
relu' = [out > 0], gelu' = Phi(x) + x phi(x), sigmoid' = s (1 - s), log_sigmoid' = sigmoid(-x);
softmax' (from y = softmax(x)) = y (g - sum(g y)), log_softmax' (from y) = g - exp(y) sum(g), along dim.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from burn_tensor import activation as act

from .._ctx import sample
from .._prim import wrap

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def _relu_backward(burn, x, g, layout):
    out = np.maximum(x, 0.0)
    o, o_ref = burn.view_input(out, layout=layout)
    t, g_ref = burn.view_input(g, layout=layout)
    got = burn.backend.relu_backward(o.into_primitive(), t.into_primitive())
    return got, np.where(o_ref > 0, g_ref, 0.0)


def _gelu_backward(burn, x, g, layout):
    xt, xr = burn.view_input(x, layout=layout)
    gt, gr = burn.view_input(g, layout=layout)
    got = burn.backend.gelu_backward(xt.into_primitive(), gt.into_primitive())
    cdf = 0.5 * (1.0 + _erf(xr / math.sqrt(2.0)))
    pdf = np.exp(-0.5 * xr * xr) / math.sqrt(2.0 * math.pi)
    return got, gr * (cdf + xr * pdf)


def _sigmoid_backward(burn, x, g, layout):
    s, sr = burn.view_input(_sigmoid(burn.ref(x)), layout=layout)
    gt, gr = burn.view_input(g, layout=layout)
    got = burn.backend.sigmoid_backward(s.into_primitive(), gt.into_primitive())
    return got, gr * sr * (1.0 - sr)


def _log_sigmoid_backward(burn, x, g, layout):
    xt, xr = burn.view_input(x, layout=layout)
    gt, gr = burn.view_input(g, layout=layout)
    got = burn.backend.log_sigmoid_backward(xt.into_primitive(), gt.into_primitive())
    return got, gr * _sigmoid(-xr)


BACKWARD = {
    "relu_backward": _relu_backward,
    "gelu_backward": _gelu_backward,
    "sigmoid_backward": _sigmoid_backward,
    "log_sigmoid_backward": _log_sigmoid_backward,
}
# small; and large enough (> 4096 elements) for bulk fast paths (NdArray's bitwise mask_fill)
SHAPES = [(3, 4), (2, 3, 5), (64, 70)]


@pytest.mark.parametrize("layout", ["contiguous", "permuted", "flipped", "strided"])
@pytest.mark.parametrize("name", list(BACKWARD))
def test_activation_backward(burn, name, layout):
    for seed, shape in enumerate(SHAPES):
        x = sample(shape, "any", seed)
        x.flat[::7] = 0.0  # relu's kink: the gradient at 0 is 0 (Burn masks output <= 0)
        g = sample(shape, "any", seed + 30)
        got, expected = BACKWARD[name](burn, x, g, layout)
        burn.assert_close(wrap(burn, got), expected, burn.loose)


@pytest.mark.parametrize("name", list(BACKWARD))
def test_activation_backward_large_inputs(burn, name):
    x = np.array([-1000.0, -80.0, -20.0, 20.0, 80.0, 1000.0, 0.0, -0.0])
    g = np.array([1.0, -2.0, 0.5, 3.0, -1.0, 2.0, 1.5, -0.5])
    with np.errstate(over="ignore", under="ignore"):
        got, expected = BACKWARD[name](burn, x, g, "contiguous")
    burn.assert_close(wrap(burn, got), expected, burn.loose)


@pytest.mark.parametrize("slope", [0.0, 0.01, 0.5, 2.0])
def test_leaky_relu_slopes_and_special_values(burn, slope):
    x = np.array([[-3.0, -0.5, 0.0, 0.5, 3.0], [np.nan, np.inf, -np.inf, -1e30, 1e30]])
    t, xr = burn.view_input(x, layout="permuted")
    with np.errstate(invalid="ignore"):
        expected = np.where(xr < 0, slope * xr, xr)
    burn.assert_close(act.leaky_relu(t, slope), expected)


@pytest.mark.parametrize("alpha, beta", [(0.2, 0.5), (0.3, 0.4), (1.0, 0.0), (0.1, -0.2)])
def test_hard_sigmoid_alpha_beta(burn, alpha, beta):
    x = np.concatenate([sample((12,), "any", 3) * 3, [np.inf, -np.inf, 0.0, 1e30]])
    t, xr = burn.view_input(x, layout="flipped")
    with np.errstate(invalid="ignore"):
        expected = np.clip(alpha * xr + beta, 0.0, 1.0)
    burn.assert_close(act.hard_sigmoid(t, alpha, beta), expected)


def test_prelu_alpha_shapes(burn):
    x = sample((2, 3, 4, 5), "any", 4)
    x[0, 1, 2, 3] = np.nan
    t, xr = burn.view_input(x, layout="strided")
    alpha = np.array([0.1, -0.5, 2.0])
    expected = np.where(xr < 0, alpha.reshape(1, 3, 1, 1) * xr, xr)
    burn.assert_close(act.prelu(t, burn.float(alpha)), expected)
    burn.assert_close(act.prelu(t, burn.float([0.25])), np.where(xr < 0, 0.25 * xr, xr))
    # rank 1: a single alpha only
    v, vr = burn.view_input(np.array([-2.0, 0.0, 3.0, -0.5]))
    burn.assert_close(act.prelu(v, burn.float([0.5])), np.where(vr < 0, 0.5 * vr, vr))


def _softmax_ref(x, dim):
    e = np.exp(x - x.max(dim, keepdims=True))
    return e / e.sum(dim, keepdims=True)


def _softmax_backward(burn, x, g, dim, layout):
    y = _softmax_ref(burn.ref(x), dim)
    yt, yr = burn.view_input(y, layout=layout)
    gt, gr = burn.view_input(g, layout=layout)
    got = burn.backend.softmax_backward(yt.into_primitive(), gt.into_primitive(), dim)
    return got, yr * (gr - (gr * yr).sum(dim, keepdims=True))


def _log_softmax_backward(burn, x, g, dim, layout):
    y = np.log(_softmax_ref(burn.ref(x), dim))
    yt, yr = burn.view_input(y, layout=layout)
    gt, gr = burn.view_input(g, layout=layout)
    got = burn.backend.log_softmax_backward(yt.into_primitive(), gt.into_primitive(), dim)
    return got, gr - np.exp(yr) * gr.sum(dim, keepdims=True)


SOFTMAX_BACKWARD = {
    "softmax_backward": _softmax_backward,
    "log_softmax_backward": _log_softmax_backward,
}
# rows of 1, odd lengths, and one large enough (> 2^14 elements) for NdArray's native kernels
SOFTMAX_SHAPES = [(1, 1), (3, 4, 5), (7, 1, 9), (64, 300)]


@pytest.mark.parametrize("layout", ["contiguous", "permuted", "flipped", "strided"])
@pytest.mark.parametrize("name", list(SOFTMAX_BACKWARD))
def test_softmax_backward(burn, name, layout):
    for seed, shape in enumerate(SOFTMAX_SHAPES):
        x = sample(shape, "any", seed) * 4
        g = sample(shape, "any", seed + 40)
        for dim in range(len(shape)):
            got, expected = SOFTMAX_BACKWARD[name](burn, x, g, dim, layout)
            burn.assert_close(wrap(burn, got), expected, burn.loose)
