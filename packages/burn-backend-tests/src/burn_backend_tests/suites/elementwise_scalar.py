"""Conformance: elementwise ops with a Python scalar operand (arithmetic, comparison, clamp, pow,
reflected operators), every kind and input layout; very large values and NaN propagation."""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import Bool, Float, Int
from burn_tensor import activation as act

from .._ctx import sample
from .elementwise import SHAPES, _sigmoid, _trunc_div

SCALAR = {
    "add_scalar": (lambda t, s: t.add_scalar(s), np.add),
    "sub_scalar": (lambda t, s: t.sub_scalar(s), np.subtract),
    "mul_scalar": (lambda t, s: t.mul_scalar(s), np.multiply),
    "div_scalar": (lambda t, s: t.div_scalar(s), np.divide),
    "remainder_scalar": (lambda t, s: t.remainder_scalar(s), np.remainder),
    "add": (lambda t, s: t + s, np.add),
    "radd": (lambda t, s: s + t, lambda a, s: s + a),
    "rsub": (lambda t, s: s - t, lambda a, s: s - a),
    "rmul": (lambda t, s: s * t, lambda a, s: s * a),
    "equal_elem": (lambda t, s: t.equal_elem(s), np.equal),
    "not_equal_elem": (lambda t, s: t.not_equal_elem(s), np.not_equal),
    "greater_elem": (lambda t, s: t.greater_elem(s), np.greater),
    "greater_equal_elem": (lambda t, s: t.greater_equal_elem(s), np.greater_equal),
    "lower_elem": (lambda t, s: t.lower_elem(s), np.less),
    "lower_equal_elem": (lambda t, s: t.lower_equal_elem(s), np.less_equal),
    "gt_scalar": (lambda t, s: t > s, np.greater),
    "clamp": (lambda t, s: t.clamp(-abs(s), abs(s)), lambda a, s: np.clip(a, -abs(s), abs(s))),
    "clamp_min": (lambda t, s: t.clamp_min(s), np.maximum),
    "clamp_max": (lambda t, s: t.clamp_max(s), np.minimum),
    "powi_scalar": (lambda t, s: t.powi_scalar(s), np.power),
}


@pytest.mark.parametrize("kind", [Float, Int], ids=["float", "int"])
@pytest.mark.parametrize("layout", ["contiguous", "permuted", "expanded"])
@pytest.mark.parametrize("name", list(SCALAR))
def test_scalar_ops(burn, name, layout, kind):
    op, ref = SCALAR[name]
    for i, shape in enumerate(SHAPES):
        for s in (3, -2):
            t, xr = burn.view_input(sample(shape, "int", seed=i), kind, layout)
            if name == "powi_scalar" and s < 0:
                s = 2 if kind is Int else s
            if kind is Int and name == "div_scalar":
                expected = _trunc_div(xr, s)
            else:
                with np.errstate(all="ignore"):
                    expected = ref(xr.astype(np.float64) if kind is Float else xr, s)
            out_kind = Bool if "elem" in name or name == "gt_scalar" else kind
            burn.assert_result(op(t, s), expected, out_kind)


@pytest.mark.parametrize("layout", ["contiguous", "flipped"])
def test_float_scalar_pow_and_reflected(burn, layout):
    t, x = burn.view_input(sample((3, 4), "pos"), Float, layout)
    burn.assert_close(t.powf_scalar(1.5), x**1.5)
    burn.assert_close(t**2, x**2)
    burn.assert_close(t**0.5, np.sqrt(x))
    burn.assert_close(2.0**t, 2.0**x)
    burn.assert_close(1.0 / t, 1.0 / x)
    burn.assert_close(t / 4, x / 4)
    burn.assert_close(t.powi_scalar(3), x**3)
    burn.assert_close(t.powi(burn.int(np.full((3, 4), 2))), x**2)
    burn.assert_close(t.powf(burn.float(np.full((1, 4), 0.5))), np.sqrt(x))
    burn.assert_close(t ** burn.int(np.full((1, 4), 2)), x**2)  # Int exponent -> powi
    burn.assert_close(t ** burn.float(np.full((1, 4), 0.5)), np.sqrt(x))


def test_int_pow(burn):
    x = np.array([[1, -2, 3], [0, 4, -5]])
    t = burn.int(x)
    burn.assert_equal(t.powi_scalar(3), x**3)
    burn.assert_equal(t.powi_scalar(0), np.ones_like(x))
    burn.assert_equal(t.powi(burn.int([[2, 0, 1]])), x ** np.array([[2, 0, 1]]))
    burn.assert_equal(t**2, x**2)


def test_large_values(burn):
    big = 1e30 if burn.fdt.np != np.float16 else 6e4
    x = np.array([big, -big, big / 3, 1.0])
    t, xr = burn.view_input(x)
    # the exact sum rounded to the float type: 6e4 + 6e4 overflows float16 to inf (IEEE)
    burn.assert_close(t.add(t), burn.ref(xr + xr))
    burn.assert_close(t.mul_scalar(0.5), xr * 0.5)
    burn.assert_close(t.div(t), np.ones(4))
    burn.assert_close(
        act.sigmoid(burn.float([-1000.0, 1000.0, -80.0, 80.0])),
        _sigmoid(np.array([-1000.0, 1000.0, -80.0, 80.0])),
    )
    burn.assert_close(act.softplus(burn.float([-1000.0, 1000.0, 50.0])), [0.0, 1000.0, 50.0])
    burn.assert_close(act.log_sigmoid(burn.float([-1000.0, 1000.0])), [-1000.0, 0.0])
    # exp(88) = 1.65e38: finite in float32 and bfloat16, inf in float16 (rounded like the sum)
    burn.assert_close(burn.float([88.0]).exp(), burn.ref([np.exp(np.float64(burn.cast(88.0)))]))


def test_nan_propagates_through_arithmetic(burn):
    t = burn.float([np.nan, 1.0, np.inf, -np.inf])
    one = burn.float([1.0, np.nan, -np.inf, -np.inf])
    burn.assert_close(t.add(one), [np.nan, np.nan, np.nan, -np.inf])
    burn.assert_close(t.mul_scalar(0.0), [np.nan, 0.0, np.nan, np.nan])
    burn.assert_close(t.sum(), [np.nan])
