"""Conformance: activation functions (softmax family and parametrized activations)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from burn_tensor import activation as act

from .._ctx import LAYOUTS, sample

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _softmax(x, dim):
    e = np.exp(x - x.max(dim, keepdims=True))
    return e / e.sum(dim, keepdims=True)


def _log_softmax(x, dim):
    m = x.max(dim, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(dim, keepdims=True))


def _quiet_softmax(x, dim):
    m = x.max(dim, keepdims=True)
    e = np.exp(x - m)
    with np.errstate(over="ignore"):  # exp(-m) = inf for m << 0: the quiet term vanishes
        return e / (np.exp(-m) + e.sum(dim, keepdims=True))


SOFTMAX = {
    "softmax": (act.softmax, _softmax),
    "log_softmax": (act.log_softmax, _log_softmax),
    "softmin": (act.softmin, lambda x, d: _softmax(-x, d)),
    "quiet_softmax": (act.quiet_softmax, _quiet_softmax),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", list(SOFTMAX))
def test_softmax_family(burn, name, layout):
    op, ref = SOFTMAX[name]
    t, x = burn.view_input(sample((3, 4, 5), "any", 1), layout=layout)
    for dim in (0, 1, -1):
        burn.assert_close(op(t, dim), ref(x, dim), burn.loose)


@pytest.mark.parametrize("name", list(SOFTMAX))
def test_softmax_family_shapes(burn, name):
    # rows of length 1, a size-1 dim, odd lengths, and one large enough for bulk/native paths
    op, ref = SOFTMAX[name]
    for seed, shape in enumerate([(1,), (5, 1), (1, 7), (2, 1, 3), (33, 257), (4, 4100)]):
        t, x = burn.view_input(sample(shape, "any", seed) * 8)
        for dim in range(len(shape)):
            burn.assert_close(op(t, dim), ref(x, dim), burn.loose)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_family_special_values(burn, name):
    # -inf logits get probability 0 (log: -inf); a row with +inf or nan is nan, as in PyTorch
    op, ref = SOFTMAX[name]
    x = np.array([[0.0, -np.inf, 1.0], [np.nan, 0.0, 1.0], [np.inf, 0.0, 1.0], [-1e30, 1e30, 0.0]])
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        expected = ref(burn.ref(x), 1)
    burn.assert_close(op(burn.float(x), 1), expected, burn.loose)


@pytest.mark.parametrize("name", list(SOFTMAX))
def test_softmax_family_large_logits(burn, name):
    op, ref = SOFTMAX[name]
    x = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1001.0, -1002.0], [0.0, 80.0, -80.0]])
    burn.assert_close(op(burn.float(x), 1), ref(burn.ref(x), 1), burn.loose)


def _elu(x, a):
    return np.where(x > 0, x, a * (np.exp(x) - 1))


PARAM = {
    "leaky_relu_0.2": (lambda t: act.leaky_relu(t, 0.2), lambda x: np.where(x < 0, 0.2 * x, x)),
    "softplus_beta2": (lambda t: act.softplus(t, 2.0), lambda x: np.logaddexp(0, 2 * x) / 2),
    "hard_sigmoid": (act.hard_sigmoid, lambda x: np.clip(0.2 * x + 0.5, 0, 1)),
    "hard_swish": (act.hard_swish, lambda x: x * np.clip(x / 6 + 0.5, 0, 1)),
    "gelu_approximate": (
        act.gelu_approximate,
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    ),
    "elu": (act.elu, lambda x: _elu(x, 1.0)),
    "celu": (lambda t: act.celu(t, 2.0), lambda x: np.where(x > 0, x, 2.0 * (np.exp(x / 2.0) - 1))),
    "selu": (act.selu, lambda x: 1.0507009873554805 * _elu(x, 1.6732632423543772)),
    "relu6": (act.relu6, lambda x: np.clip(x, 0, 6)),
    "hardtanh": (act.hardtanh, lambda x: np.clip(x, -1, 1)),
    "softsign": (act.softsign, lambda x: x / (1 + np.abs(x))),
    "tanhshrink": (act.tanhshrink, lambda x: x - np.tanh(x)),
    "threshold": (lambda t: act.threshold(t, 0.5, -9.0), lambda x: np.where(x <= 0.5, -9.0, x)),
    "swish": (act.swish, lambda x: x / (1 + np.exp(-x))),
    "glu": (lambda t: act.glu(t, -1), lambda x: x[..., :2] / (1 + np.exp(-x[..., 2:]))),
}


@pytest.mark.parametrize("layout", ["contiguous", "permuted", "strided"])
@pytest.mark.parametrize("name", list(PARAM))
def test_parametrized_activations(burn, name, layout):
    op, ref = PARAM[name]
    x = sample((3, 4), "any", 2) * 2
    t, xr = burn.view_input(x, layout=layout)
    burn.assert_close(op(t), ref(xr), burn.loose)


def test_prelu(burn):
    x = sample((2, 3, 4), "any", 3)
    alpha = np.array([0.1, 0.2, 0.3])
    t, xr = burn.view_input(x, layout="permuted")
    expected = np.where(xr < 0, alpha.reshape(1, 3, 1) * xr, xr)
    burn.assert_close(act.prelu(t, burn.float(alpha)), expected * 1.0, burn.loose)
    burn.assert_close(act.prelu(t, burn.float([0.25])), np.where(xr < 0, 0.25 * xr, xr), burn.loose)
