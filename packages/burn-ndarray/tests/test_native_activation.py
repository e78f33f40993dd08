"""Activations (`_numpy_activation`, `_native_activation` over `_native/act.c`): sigmoid,
sigmoid_backward, hard_sigmoid, leaky_relu, log_sigmoid against numpy float64 on odd sizes and
large |x| (no overflow warning, NaN passes through); the native kernels and the numpy path agree
(bit for bit for the exact ops); the numpy path is the default decomposition's bits; every thread
count alike. The conformance suite (`test_conformance.py`) covers them through the Tensor API."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from burn_ndarray import NdArray, _native
from burn_tensor import Backend, Tensor, activation

LIB = _native.lib()
needs_native = pytest.mark.skipif(LIB is None, reason=f"native kernels: {_native.status()}")
RNG = np.random.default_rng(37)
# parallel_min=1: every size goes native; the default NdArray keeps numpy below 2^14 elements
NATIVE = {n: NdArray(num_threads=n, parallel_min=1) for n in (1, 3)}
NATIVE64 = NdArray(float_dtype="float64", int_dtype="int64", num_threads=2, parallel_min=1)
PLAIN = NdArray(num_threads=1)
SIZES = [1, 7, 4095, 4097, 3 * 4096 + 5, 20_011]
HUGE = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, 1000.0, -1000.0, 88.0, -88.0, 89.0, -89.0,
        100.0, -100.0, 104.0, -104.0, 1e30, -1e30, 709.0, -709.0, 746.0, -746.0]  # fmt: skip


def _input(n, dtype):
    x = RNG.uniform(-12, 12, n).astype(dtype)
    k = min(n, len(HUGE))
    with np.errstate(over="ignore"):  # 1e30 / 746 in float32: inf, as wanted
        x[:k] = np.array(HUGE[:k]).astype(dtype)
    return x


def _sigmoid64(x):
    x = x.astype(np.float64)
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def _log_sigmoid64(x):
    x = x.astype(np.float64)
    with np.errstate(invalid="ignore"):  # logaddexp(0, nan) flags invalid
        return -np.logaddexp(0.0, -x)


REFS = {
    "sigmoid": (lambda b, x: b.sigmoid(x), _sigmoid64),
    "log_sigmoid": (lambda b, x: b.log_sigmoid(x), _log_sigmoid64),
    "hard_sigmoid": (
        lambda b, x: b.hard_sigmoid(x, 1 / 6, 0.5),
        lambda x: np.clip(x.astype(np.float64) / 6 + 0.5, 0.0, 1.0),
    ),
    "leaky_relu": (
        lambda b, x: b.leaky_relu(x, 0.01),
        lambda x: np.where(x < 0, 0.01 * x.astype(np.float64), x.astype(np.float64)),
    ),
}


def _assert_close(got, want, dtype, atol=None):
    """Relative to float64 (a few ulp of the dtype), with an absolute floor at the dtype's
    smallest normal (subnormal results carry fewer bits), or `atol` where the formula cancels
    (hard_sigmoid's x * alpha + beta near 0: an ulp of beta)."""
    info = np.finfo(dtype)
    rtol = 4 * float(info.eps)
    want = want.astype(dtype).astype(np.float64)  # the float64 value rounded once to the dtype
    atol = float(info.tiny) if atol is None else atol
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=atol)


def _strict():
    """numpy raises on any floating-point flag and Python on any warning: an op that leaks
    either fails the test."""
    w = warnings.catch_warnings()
    w.__enter__()
    warnings.simplefilter("error")
    e = np.errstate(all="raise")
    e.__enter__()
    return w, e


@pytest.mark.parametrize("name", list(REFS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_against_float64_large_values_nan_and_no_warnings(name, dtype):
    op, ref = REFS[name]
    backends = [PLAIN, NATIVE[1], NATIVE[3]] if dtype == np.float32 else [NATIVE64]
    if dtype == np.float64:
        backends.append(NdArray(float_dtype="float64", int_dtype="int64", num_threads=1))
    for n in SIZES:
        x = _input(n, dtype)
        want = ref(x)
        for b in backends:
            w, e = _strict()
            try:
                got = op(b, x)
            finally:
                e.__exit__(None, None, None)
                w.__exit__(None, None, None)
            assert got.dtype == x.dtype and got.shape == x.shape
            assert np.array_equal(np.isnan(got), np.isnan(x)), "NaN in, NaN out; no other NaN"
            cancels = name == "hard_sigmoid"
            _assert_close(got, want, dtype, float(np.finfo(dtype).eps) if cancels else None)


@needs_native
def test_the_ops_run_native_from_native_min():
    """Before act.c, sigmoid was burn_tensor's default (seven ops ending in a `mask_where`) and
    hard_sigmoid / leaky_relu / log_sigmoid / sigmoid_backward were defaults too."""
    big, small = np.zeros(1 << 15, np.float32), np.zeros(8, np.float32)
    extra = {"sigmoid_backward": (big,), "hard_sigmoid": (0.2, 0.5), "leaky_relu": (0.01,)}
    for name in ("sigmoid", "sigmoid_backward", "hard_sigmoid", "leaky_relu", "log_sigmoid"):
        args = (big, *extra.get(name, ()))
        text = str(PLAIN.explain(name, *args))
        assert "native tier runs" in text, text
        text = str(PLAIN.explain(name, *(small if a is big else a for a in args)))
        assert "burn_ndarray._numpy_activation" in text, text


@needs_native
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_native_matches_numpy_path(dtype):
    """The exact ops give the numpy path's bits; sigmoid and log_sigmoid differ only by the
    exp/log1p implementation (a few ulp). Every thread count gives the same bits."""
    b1, b3 = (NATIVE[1], NATIVE[3]) if dtype == np.float32 else (NATIVE64, NATIVE64)
    cls = type(PLAIN)
    x = _input(100_003, dtype)
    x[100:200] = -0.0
    y = RNG.uniform(0, 1, x.shape).astype(dtype)
    g = RNG.uniform(-1, 1, x.shape).astype(dtype)
    exact = {
        "hard_sigmoid": ((x, 0.2, 0.5), (x, 1 / 6, 0.5), (x, 3.0, -1.0)),
        "leaky_relu": ((x, 0.01), (x, 2.0), (x, -0.5)),
        "sigmoid_backward": ((y, g),),
    }
    for name, calls in exact.items():
        for args in calls:
            want = getattr(cls, name)(PLAIN, *args)  # the class's numpy op
            for b in (b1, b3):
                got = getattr(b, name)(*args)
                np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    for name in ("sigmoid", "log_sigmoid"):
        want = getattr(cls, name)(PLAIN, x)
        got = getattr(b1, name)(x)
        np.testing.assert_array_equal(got.view(np.uint8), getattr(b3, name)(x).view(np.uint8))
        _assert_close(got, want.astype(np.float64), dtype)


def test_numpy_path_is_the_default_decomposition():
    """The class's numpy ops compute the defaults' formulas operation for operation."""
    b = PLAIN
    x = _input(5000, np.float32)
    y = RNG.uniform(0, 1, x.shape).astype(np.float32)
    with np.errstate(all="ignore"):
        for name, args in (
            ("sigmoid", (x,)),
            ("log_sigmoid", (x,)),
            ("hard_sigmoid", (x, 0.2, 0.5)),
            ("leaky_relu", (x, 0.2)),
            ("sigmoid_backward", (y, x)),
        ):
            want = getattr(Backend, name)(b, *args)
            got = getattr(type(b), name)(b, *args)
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=name)


@needs_native
def test_views_and_mixed_dtypes_fall_back():
    b = NATIVE[1]
    x = RNG.uniform(-9, 9, (300, 200)).astype(np.float32)
    np.testing.assert_array_equal(b.hard_sigmoid(x.T, 0.2, 0.5), np.clip(x.T * np.float32(0.2) + np.float32(0.5), 0, 1))
    _assert_close(b.sigmoid(x.T), _sigmoid64(x.T), np.float32)
    y, g = x[:, :100], x[:, 100:]  # not contiguous: numpy's path
    want = g * (y * (1 - y))
    np.testing.assert_array_equal(b.sigmoid_backward(y, g), want)
    # an array operand (not a scalar): numpy's path, broadcast as numpy does
    slope = np.array([0.25], np.float32)
    np.testing.assert_array_equal(b.leaky_relu(x, slope), np.where(x < 0, x * slope, x))
    # a float32 scalar beyond float32's range: numpy's path (inf / nan), quietly
    got = b.hard_sigmoid(x, 1e300, 0.5)
    assert np.isnan(got).sum() == 0 and set(np.unique(got)) <= {0.0, 1.0}


def test_tensor_silu_and_hard_swish_on_ndarray():
    """Through the Tensor API (what imported CNNs call), at a native size and a small one."""
    dev = NdArray(num_threads=1).device()
    for shape in ((1, 8, 4, 4), (1, 16, 40, 40)):
        x = RNG.normal(0, 6, shape).astype(np.float32)
        t = Tensor.from_data(x, dev)
        x64 = x.astype(np.float64)
        _assert_close(activation.silu(t).to_data().numpy(), x64 * _sigmoid64(x), np.float32)
        want = x64 * np.clip(x64 / 6 + 0.5, 0, 1)
        got = activation.hard_swish(t).to_data().numpy().astype(np.float64)
        assert np.all(np.abs(got - want) <= 1e-6 * np.abs(x64))  # an ulp of beta, times x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_silu_is_one_op_against_float64_and_threads(dtype):
    """silu (`un_silu_*` in act.c, issue 37: efficientnet's x * sigmoid(x)) is a backend op:
    within a few ulp of float64 x / (1 + exp(-x)) (NaN in, NaN out; large |x| without flags),
    the same bits as the native sigmoid times x, and alike on every thread count."""
    backends = [NATIVE[1], NATIVE[3], PLAIN] if dtype == np.float32 else [NATIVE64]
    for n in SIZES:
        x = _input(n, dtype)
        with np.errstate(over="ignore", invalid="ignore"):
            want = x.astype(np.float64) * _sigmoid64(x)
        outs = []
        for b in backends:
            w, e = _strict()
            try:
                got = b.silu(x)
                with np.errstate(invalid="ignore"):  # inf * 0 of the reference product
                    split = b.float_mul(x, b.sigmoid(x))
            finally:
                e.__exit__(None, None, None)
                w.__exit__(None, None, None)
            assert got.dtype == x.dtype and got.shape == x.shape
            np.testing.assert_array_equal(got, split)  # NaN where the split form has NaN
            fin = np.isfinite(want)
            _assert_close(got[fin], want[fin], dtype)
            if b is not PLAIN:  # PLAIN: numpy's exp below native_min, other bits by design
                outs.append(got)
        for o in outs[1:]:
            np.testing.assert_array_equal(o, outs[0])


@needs_native
def test_silu_runs_native_from_native_min():
    text = str(PLAIN.explain("silu", np.zeros(1 << 15, np.float32)))
    assert "native tier runs" in text, text


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_hard_swish_is_one_op_with_the_defaults_bits(dtype):
    """hard_swish (`un_hard_swish_*` in act.c, issue 37: mobilenet_v3's HardSwish) is a backend
    op with exactly the default's bits, x * hard_sigmoid(x, 1/6, 1/2), on every thread count,
    and within an ulp-sized bound of the float64 formula (NaN in, NaN out)."""
    backends = [NATIVE[1], NATIVE[3], PLAIN] if dtype == np.float32 else [NATIVE64]
    for n in SIZES:
        x = _input(n, dtype)
        x64 = x.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            want = x64 * np.clip(x64 / 6 + 0.5, 0, 1)
        for b in backends:
            w, e = _strict()
            try:
                got = b.hard_swish(x)
                with np.errstate(invalid="ignore", over="ignore"):
                    split = b.float_mul(x, b.hard_sigmoid(x, 1.0 / 6.0, 0.5))
            finally:
                e.__exit__(None, None, None)
                w.__exit__(None, None, None)
            assert got.dtype == x.dtype and got.shape == x.shape
            np.testing.assert_array_equal(got, split)
            fin = np.isfinite(want) & np.isfinite(x64)
            ulp = np.finfo(dtype).eps
            assert np.all(np.abs(got[fin] - want[fin]) <= 4 * ulp * np.abs(x64[fin]) + 1e-300)


@needs_native
def test_hard_swish_runs_native_from_native_min():
    text = str(PLAIN.explain("hard_swish", np.zeros(1 << 15, np.float32)))
    assert "native tier runs" in text, text
