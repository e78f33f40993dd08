"""Native softmax / log_softmax and their gradients (`_native_softmax`) against numpy float64:
odd sizes, every dim, -inf and huge values, NaN rows, empty tensors, non-contiguous inputs, and
bitwise-equal results for 1, 2 and 4 threads."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray, _native

LIB = _native.lib()
RNG = np.random.default_rng(5)
B32 = {n: NdArray(num_threads=n, parallel_min=1) for n in (1, 2, 4)}
B64 = NdArray(float_dtype="float64", int_dtype="int64", num_threads=3, parallel_min=1)
HAS_OPS = hasattr(B32[1], "softmax_backward")
pytestmark = [
    pytest.mark.skipif(LIB is None, reason=f"native kernels: {_native.status()}"),
    pytest.mark.skipif(not HAS_OPS, reason="burn_tensor has no softmax backend ops yet"),
]
SHAPES = [(7,), (3, 1001), (5, 7, 9), (2, 3, 4097), (1000, 3), (2, 130, 3, 5)]


def ref_softmax(x, d):
    e = np.exp(x - x.max(d, keepdims=True))
    return e / e.sum(d, keepdims=True)


def ref_log_softmax(x, d):
    s = x - x.max(d, keepdims=True)
    return s - np.log(np.exp(s).sum(d, keepdims=True))


def ref_softmax_backward(y, g, d):
    return y * (g - (g * y).sum(d, keepdims=True))


def ref_log_softmax_backward(y, g, d):
    return g - np.exp(y) * g.sum(d, keepdims=True)


def tol(dtype):
    return {"rtol": 2e-5, "atol": 2e-6} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-13}


def _check_native(b, name):
    assert getattr(b, name).__module__ == "burn_ndarray._native_softmax"


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward_every_dim_against_float64(shape, dtype):
    b = B32[2] if dtype == np.float32 else B64
    _check_native(b, "softmax")
    x = RNG.uniform(-6, 6, shape).astype(dtype)
    r = x.astype(np.float64)
    for d in list(range(len(shape))) + [-1]:
        got = b.softmax(x, d)
        assert got.dtype == dtype and got.shape == x.shape
        np.testing.assert_allclose(got, ref_softmax(r, d), **tol(dtype))
        got = b.log_softmax(x, d)
        # log-probabilities: an absolute error ~ ulp(|x - max|)
        t = tol(dtype)
        np.testing.assert_allclose(got, ref_log_softmax(r, d), rtol=t["rtol"], atol=t["atol"] * 8)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_backward_every_dim_against_float64(shape, dtype):
    b = B32[4] if dtype == np.float32 else B64
    _check_native(b, "softmax_backward")
    x = RNG.uniform(-3, 3, shape)
    g = RNG.uniform(-1, 1, shape).astype(dtype)
    for d in range(len(shape)):
        y = ref_softmax(x, d).astype(dtype)
        want = ref_softmax_backward(y.astype(np.float64), g.astype(np.float64), d)
        np.testing.assert_allclose(b.softmax_backward(y, g, d), want, **tol(dtype))
        ly = ref_log_softmax(x, d).astype(dtype)
        want = ref_log_softmax_backward(ly.astype(np.float64), g.astype(np.float64), d)
        t = tol(dtype)
        np.testing.assert_allclose(
            b.log_softmax_backward(ly, g, d), want, rtol=t["rtol"], atol=t["atol"] * 8
        )


def test_hand_derived_values():
    """softmax([0, ln 3]) = [1/4, 3/4]; its gradient for grad [1, 0] is y*(g - y0) =
    [1/4 * 3/4, -3/4 * 1/4]; log_softmax's for grad [1, 1] is g - 2 * exp(y)."""
    b = B32[1]
    x = np.array([[0.0, np.log(3.0)]], np.float64)
    b64 = B64
    np.testing.assert_allclose(b64.softmax(x, 1), [[0.25, 0.75]], rtol=1e-15)
    np.testing.assert_allclose(b64.log_softmax(x, 1), np.log([[0.25, 0.75]]), rtol=1e-15)
    y = np.array([[0.25, 0.75]])
    np.testing.assert_allclose(b64.softmax_backward(y, np.array([[1.0, 0.0]]), 1),
                               [[0.1875, -0.1875]], rtol=1e-15)  # fmt: skip
    ly = np.log(y)
    np.testing.assert_allclose(b64.log_softmax_backward(ly, np.ones((1, 2)), 1),
                               [[0.5, -0.5]], rtol=1e-14)  # fmt: skip
    x32 = x.astype(np.float32)
    np.testing.assert_allclose(b.softmax(x32, -1), [[0.25, 0.75]], rtol=1e-6)


def test_large_and_infinite_values():
    b = B32[2]
    x = RNG.uniform(-1, 1, (6, 300)).astype(np.float32)
    x[0, 5] = 3e38  # dominates its row: one-hot, no overflow
    x[1, :] = 1e30  # a constant row of huge values: uniform
    x[2, ::2] = -np.inf  # masked entries: probability 0
    x[3, :] = -np.inf  # a fully masked row: NaN, as exp(x - max) / sum in numpy and torch
    x[4, 7] = np.nan  # NaN poisons its row
    x[5, 9] = np.inf  # inf - inf: NaN row
    r = x.astype(np.float64)
    with np.errstate(all="ignore"):
        want, lwant = ref_softmax(r, 1), ref_log_softmax(r, 1)
    got, lgot = b.softmax(x, 1), b.log_softmax(x, 1)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6, equal_nan=True)
    np.testing.assert_allclose(lgot, lwant, rtol=2e-5, atol=2e-5, equal_nan=True)
    assert got[0, 5] == 1.0 and got[1, 0] == np.float32(1 / 300)
    assert np.all(got[2, ::2] == 0) and np.all(lgot[2, ::2] == -np.inf)
    assert np.isnan(got[3:]).all()


def test_thread_counts_bitwise_equal():
    # rows; slabs of > 32 rows (chunked statistics); slabs of <= 32 rows (column blocks)
    cases = (((37, 4099), 1), ((37, 4099), 0), ((3, 257, 70), 1), ((64, 1000), -1),
             ((4, 16, 300), 1), ((2, 32, 513), 1), ((33, 600), 0))  # fmt: skip
    for shape, d in cases:
        x = RNG.uniform(-8, 8, shape).astype(np.float32)
        g = RNG.uniform(-1, 1, shape).astype(np.float32)
        outs = []
        for b in B32.values():
            y = b.softmax(x, d)
            outs.append((y, b.log_softmax(x, d), b.softmax_backward(y, g, d),
                         b.log_softmax_backward(np.log(y), g, d)))  # fmt: skip
        for other in outs[1:]:
            for a, c in zip(outs[0], other):
                np.testing.assert_array_equal(a.view(np.uint32), c.view(np.uint32))


def test_non_contiguous_and_empty():
    b = B32[2]
    x = RNG.uniform(-2, 2, (300, 200)).astype(np.float32)
    for v in (x.T, x[:, ::3], x[::-1]):
        np.testing.assert_array_equal(b.softmax(v, 1), b.softmax(np.ascontiguousarray(v), 1))
        np.testing.assert_array_equal(b.log_softmax(v, 0),
                                      b.log_softmax(np.ascontiguousarray(v), 0))  # fmt: skip
    for shape in ((0, 5), (5, 0), (0,)):
        e = np.zeros(shape, np.float32)
        assert b.softmax(e, -1).shape == shape and b.log_softmax(e, 0).shape == shape
        assert b.softmax_backward(e, e, -1).shape == shape


def test_bad_dim_is_a_clear_error():
    b = B32[1]
    x = np.zeros((4, 5), np.float32)
    with pytest.raises(IndexError, match="dim 2 out of range"):
        b.softmax(x, 2)
    with pytest.raises(IndexError, match="dim -3 out of range"):
        b.log_softmax_backward(x, x, -3)


def test_default_sizes_and_fallbacks():
    """Without a forced parallel_min: small tensors and other dtypes take the default
    decomposition (same values); from native_min the kernel."""
    b = NdArray(num_threads=2)
    small = RNG.uniform(-1, 1, (4, 5)).astype(np.float32)
    np.testing.assert_allclose(b.softmax(small, 1), ref_softmax(small.astype(np.float64), 1),
                               rtol=1e-5, atol=1e-7)  # fmt: skip
    big = RNG.uniform(-1, 1, (128, 1024)).astype(np.float32)
    np.testing.assert_allclose(b.softmax(big, 1), ref_softmax(big.astype(np.float64), 1),
                               rtol=2e-5, atol=2e-6)  # fmt: skip
    # float16: no kernel, the decomposition (in float16)
    h = NdArray(float_dtype="float16", num_threads=2, parallel_min=1)
    x16 = big.astype(np.float16)
    got = h.softmax(x16, 1)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, ref_softmax(x16.astype(np.float64), 1), rtol=2e-3, atol=2e-4)
