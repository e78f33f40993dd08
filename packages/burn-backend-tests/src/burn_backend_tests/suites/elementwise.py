"""Conformance: unary and binary elementwise ops, every kind, every input layout, broadcasting,
empty dims and IEEE special values. Scalar operands: `elementwise_scalar.py`; comparison helpers,
Bool logic and bitwise ops: `logic.py`."""

from __future__ import annotations

import math

import numpy as np
import pytest
from burn_tensor import Bool, Float, Int, Tensor, TensorCheckError
from burn_tensor import activation as act

from .._ctx import LAYOUTS, SPECIAL, sample

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def _softplus(x, beta=1.0):
    return np.logaddexp(0.0, beta * x) / beta


# name -> (Tensor op, numpy float64 reference, input domain)
UNARY_FLOAT = {
    "exp": (Tensor.exp, np.exp, "any"),
    "log": (Tensor.log, np.log, "pos"),
    "log1p": (Tensor.log1p, np.log1p, "pos"),
    "sqrt": (Tensor.sqrt, np.sqrt, "pos"),
    "recip": (Tensor.recip, np.reciprocal, "nonzero_int"),
    "cos": (Tensor.cos, np.cos, "any"),
    "sin": (Tensor.sin, np.sin, "any"),
    "tan": (Tensor.tan, np.tan, "unit"),
    "cosh": (Tensor.cosh, np.cosh, "small"),
    "sinh": (Tensor.sinh, np.sinh, "small"),
    "tanh": (Tensor.tanh, np.tanh, "any"),
    "acos": (Tensor.acos, np.arccos, "unit"),
    "acosh": (Tensor.acosh, np.arccosh, "ge1"),
    "asin": (Tensor.asin, np.arcsin, "unit"),
    "asinh": (Tensor.asinh, np.arcsinh, "any"),
    "atan": (Tensor.atan, np.arctan, "any"),
    "atanh": (Tensor.atanh, np.arctanh, "unit"),
    "round": (Tensor.round, np.round, "any"),
    "floor": (Tensor.floor, np.floor, "any"),
    "ceil": (Tensor.ceil, np.ceil, "any"),
    "trunc": (Tensor.trunc, np.trunc, "any"),
    "erf": (Tensor.erf, _erf, "any"),
    "abs": (Tensor.abs, np.abs, "any"),
    "neg": (Tensor.neg, np.negative, "any"),
    "sign": (Tensor.sign, np.sign, "int"),
    "square": (Tensor.square, np.square, "any"),
    "deg2rad": (Tensor.deg2rad, np.deg2rad, "any"),
    "rad2deg": (Tensor.rad2deg, np.rad2deg, "any"),
    "__neg__": (Tensor.__neg__, np.negative, "any"),
    "__abs__": (Tensor.__abs__, np.abs, "any"),
    "sigmoid": (act.sigmoid, _sigmoid, "any"),
    "relu": (act.relu, lambda x: np.maximum(x, 0.0), "any"),
    "gelu": (act.gelu, lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))), "any"),
    "silu": (act.silu, lambda x: x * _sigmoid(x), "any"),
    "mish": (act.mish, lambda x: x * np.tanh(_softplus(x)), "any"),
    "softplus": (act.softplus, _softplus, "any"),
    "log_sigmoid": (act.log_sigmoid, lambda x: -_softplus(-x), "any"),
    "leaky_relu": (act.leaky_relu, lambda x: np.where(x < 0, 0.01 * x, x), "any"),
    "act_tanh": (act.tanh, np.tanh, "any"),
}

# ops whose IEEE special-value behavior (NaN, +-inf, +-0, huge) must match numpy's
SPECIAL_OK = [
    "exp",
    "log",
    "log1p",
    "sqrt",
    "recip",
    "sin",
    "cos",
    "tanh",
    "atan",
    "abs",
    "neg",
    "floor",
    "ceil",
    "round",
    "trunc",
    "square",
    "sigmoid",
    "relu",
    "softplus",
    "log_sigmoid",
    "erf",
    "act_tanh",
]

SHAPES = [(7,), (3, 4), (2, 3, 5), (0, 3), (1, 1)]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", list(UNARY_FLOAT))
def test_unary_float(burn, name, layout):
    op, ref, domain = UNARY_FLOAT[name]
    for i, shape in enumerate(SHAPES):
        x = sample(shape, domain, seed=i)
        if name == "round":
            x = np.where(np.arange(x.size).reshape(shape) % 3 == 0, np.trunc(x) + 0.5, x)
        t, xr = burn.view_input(x, Float, layout)
        burn.assert_close(op(t), ref(xr))


@pytest.mark.parametrize("name", SPECIAL_OK)
def test_unary_float_special_values(burn, name):
    op, ref, _ = UNARY_FLOAT[name]
    x = SPECIAL.reshape(2, 5)
    t = burn.float(x)
    with np.errstate(all="ignore"):
        expected = ref(burn.ref(x))
    if burn.fdt.np != np.float64:
        # results overflow/underflow in the backend's precision like numpy's in that precision
        with np.errstate(all="ignore"):
            expected = expected.astype(burn.fdt.np).astype(np.float64)
    burn.assert_close(op(t), expected)


def test_round_half_to_even(burn):
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 24.5, 3.49, -3.51])
    burn.assert_equal(burn.float(x).round(), np.array([0, 2, 2, -0, -2, -2, 24, 3, -4.0]), Float)


def test_is_nan_is_inf_is_finite(burn):
    x = SPECIAL.reshape(2, 5)
    t = burn.float(x)
    xr = burn.ref(x)
    burn.assert_equal(t.is_nan(), np.isnan(xr))
    burn.assert_equal(t.is_inf(), np.isinf(xr))
    burn.assert_equal(t.is_finite(), np.isfinite(xr))
    assert t.contains_nan() is True
    assert burn.float([1.0, 2.0]).contains_nan() is False


@pytest.mark.parametrize("name", ["abs", "neg", "sign", "square", "__neg__", "__abs__"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_unary_int(burn, name, layout):
    op = {
        "abs": Tensor.abs,
        "neg": Tensor.neg,
        "sign": Tensor.sign,
        "square": Tensor.square,
        "__neg__": Tensor.__neg__,
        "__abs__": Tensor.__abs__,
    }[name]
    ref = {
        "abs": np.abs,
        "neg": np.negative,
        "sign": np.sign,
        "square": np.square,
        "__neg__": np.negative,
        "__abs__": np.abs,
    }[name]
    for i, shape in enumerate(SHAPES):
        t, xr = burn.view_input(sample(shape, "int", seed=i), Int, layout)
        burn.assert_equal(op(t), ref(xr).astype(np.int64), Int)


# -- binary ---------------------------------------------------------------------------------------
def _trunc_div(a, b):
    return np.trunc(a / b)


# name -> (Tensor op, reference, lhs domain, rhs domain, result kind or None = input kind)
BINARY = {
    "add": (Tensor.add, np.add, "any", "any", None),
    "sub": (Tensor.sub, np.subtract, "any", "any", None),
    "mul": (Tensor.mul, np.multiply, "any", "any", None),
    "div": (Tensor.div, np.divide, "any", "nonzero_int", None),
    "remainder": (Tensor.remainder, np.remainder, "any", "nonzero_int", None),
    "max_pair": (Tensor.max_pair, np.maximum, "int", "int", None),
    "min_pair": (Tensor.min_pair, np.minimum, "int", "int", None),
    "equal": (Tensor.equal, np.equal, "int", "int", Bool),
    "not_equal": (Tensor.not_equal, np.not_equal, "int", "int", Bool),
    "greater": (Tensor.greater, np.greater, "int", "int", Bool),
    "greater_equal": (Tensor.greater_equal, np.greater_equal, "int", "int", Bool),
    "lower": (Tensor.lower, np.less, "int", "int", Bool),
    "lower_equal": (Tensor.lower_equal, np.less_equal, "int", "int", Bool),
    "__add__": (Tensor.__add__, np.add, "any", "any", None),
    "__sub__": (Tensor.__sub__, np.subtract, "any", "any", None),
    "__mul__": (Tensor.__mul__, np.multiply, "any", "any", None),
    "__truediv__": (Tensor.__truediv__, np.divide, "any", "nonzero_int", None),
    "__mod__": (Tensor.__mod__, np.remainder, "any", "nonzero_int", None),
    "__lt__": (Tensor.__lt__, np.less, "int", "int", Bool),
    "__ge__": (Tensor.__ge__, np.greater_equal, "int", "int", Bool),
}
FLOAT_BINARY = {
    "powf": (Tensor.powf, np.power, "pos", "small", None),
    "atan2": (Tensor.atan2, np.arctan2, "any", "any", None),
    "hypot": (Tensor.hypot, np.hypot, "any", "any", None),
    "__pow__": (Tensor.__pow__, np.power, "pos", "small", None),
}
BROADCAST = [
    ((3, 4), (3, 4)),
    ((3, 1), (1, 4)),
    ((2, 3, 4), (2, 1, 4)),
    ((1,), (6,)),
    ((0, 3), (1, 3)),
    ((2, 1, 1), (1, 3, 2)),
]


def _binary_case(burn, name, table, kind, layout):
    op, ref, da, db, out_kind = table[name]
    out_kind = out_kind or kind
    for i, (sa, sb) in enumerate(BROADCAST):
        a = sample(sa, da if kind is Float else "int", seed=i)
        b = sample(
            sb,
            db if kind is Float else ("nonzero_int" if db == "nonzero_int" else "int"),
            seed=100 + i,
        )
        ta, ar = burn.view_input(a, kind, layout)
        tb, br = burn.view_input(b, kind, "flipped" if layout == "permuted" else "contiguous")
        with np.errstate(all="ignore"):
            if kind is Int and name in ("div", "__truediv__"):
                expected = _trunc_div(ar, br)
            else:
                expected = ref(ar, br)
        burn.assert_result(op(ta, tb), expected, out_kind)
        # the same op with the operands swapped broadcasts the other way
        if name not in ("div", "remainder", "__truediv__", "__mod__", "powf", "__pow__"):
            with np.errstate(all="ignore"):
                expected = ref(br, ar)
            burn.assert_result(op(tb, ta), expected, out_kind)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", list(BINARY) + list(FLOAT_BINARY))
def test_binary_float(burn, name, layout):
    _binary_case(burn, name, {**BINARY, **FLOAT_BINARY}, Float, layout)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_int(burn, name, layout):
    _binary_case(burn, name, BINARY, Int, layout)


def test_int_div_truncates_and_remainder_takes_divisor_sign(burn):
    a = np.array([7, -7, 7, -7, 0, 5, -1])
    b = np.array([2, 2, -2, -2, 3, 5, 4])
    ta, tb = burn.int(a), burn.int(b)
    burn.assert_equal(ta.div(tb), np.array([3, -3, -3, 3, 0, 1, 0]))
    burn.assert_equal(ta.remainder(tb), np.array([1, 1, -1, -1, 0, 0, 3]))
    burn.assert_equal(ta.div_scalar(-2), np.array([-3, 3, -3, 3, 0, -2, 0]))
    burn.assert_equal(ta.remainder_scalar(-3), np.array([-2, -1, -2, -1, 0, -1, -1]))
    # `//` floors like Python/PyTorch, consistent with `%`: a == (a // b) * b + a % b.
    burn.assert_equal(ta // 2, a // 2)
    burn.assert_equal(ta // tb, a // b)
    burn.assert_equal(ta // -3, a // -3)
    burn.assert_equal((ta // tb) * tb + ta % tb, a)
    burn.assert_equal(7 // tb, 7 // b)
    burn.assert_equal(-7 % tb, -7 % b)


def test_float_remainder_takes_divisor_sign(burn):
    x = burn.float([-7.0, -3.0, 2.0, 6.0, -7.5, 7.5])
    burn.assert_close(x.remainder_scalar(-2.5), [-2.0, -0.5, -0.5, -1.5, -0.0, -0.0])
    burn.assert_close(x.remainder_scalar(3.0), [2.0, 0.0, 2.0, 0.0, 1.5, 1.5])


def test_fmod_takes_dividend_sign(burn):
    # Burn's fmod (C fmod, torch.fmod): x - y * trunc(x / y), unlike remainder.
    x = burn.float([5.3, -5.3, 5.3, -5.3, -7.0, 7.5, 2.0])
    y = burn.float([2.0, 2.0, -2.0, -2.0, 10.0, 3.0, float("inf")])
    burn.assert_close(x.fmod(y), [1.3, -1.3, 1.3, -1.3, -7.0, 1.5, 2.0])
    burn.assert_close(x.fmod_scalar(2.0), [1.3, -1.3, 1.3, -1.3, -1.0, 1.5, 0.0])
    burn.assert_close(x.fmod_scalar(float("inf")), [5.3, -5.3, 5.3, -5.3, -7.0, 7.5, 2.0])
    with pytest.raises(TensorCheckError, match="fmod"):
        burn.int([1, 2]).fmod(burn.int([1, 1]))


def test_float_only_ops_refuse_int(burn):
    t = burn.int([1, 2])
    for name in ("exp", "log", "sqrt", "sin", "round", "erf", "is_nan"):
        with pytest.raises(TensorCheckError, match=name):
            getattr(t, name)()
