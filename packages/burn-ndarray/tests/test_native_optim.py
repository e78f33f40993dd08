"""The native Adam update: the default composition's bits (13 ops, burn_tensor's FloatOps) for
every dtype, step, shape and thread count, Adam's formula against numpy float64, and the
default's path for what the kernel does not take."""

from __future__ import annotations

import math

import numpy as np
import pytest
from burn_ndarray import NdArray, _native

needs_native = pytest.mark.skipif(_native.lib() is None, reason=f"native: {_native.status()}")
RNG = np.random.default_rng(11)
HYPER = (1e-3, 0.9, 0.999, 1e-8)  # lr, beta_1, beta_2, epsilon


def _default(b, *args):
    """The composition the kernel replaces: the class's op, run on b's own ops."""
    return type(b).float_adam_update(b, *args)


def _inputs(shape, dt, first):
    p = RNG.standard_normal(shape).astype(dt)
    g = (RNG.standard_normal(shape) * 10.0 ** RNG.integers(-8, 4, shape)).astype(dt)
    flat = g.reshape(-1)
    if flat.size >= 6:  # special values ride along
        flat[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30]
    if first:
        return p, g, None, None
    m1 = (RNG.standard_normal(shape) * 0.1).astype(dt)
    m2 = np.abs(RNG.standard_normal(shape) * 0.01).astype(dt)
    return p, g, m1, m2


@needs_native
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("first", [True, False])
@pytest.mark.parametrize("shape", [(1,), (72,), (300, 257), (5000, 70)])
def test_bits_of_the_default_composition(dt, first, shape):
    b = NdArray(num_threads=2)
    assert b.float_adam_update.__module__ == "burn_ndarray._native_optim"
    args = (*_inputs(shape, dt, first), *HYPER, 1 if first else 7)
    got = b.float_adam_update(*args)
    want = _default(b, *args)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.tobytes() == w.tobytes()


@needs_native
def test_the_same_bits_for_every_thread_count():
    args = (*_inputs((4096 * 9 + 3,), np.float32, False), *HYPER, 3)
    outs = [NdArray(num_threads=t, parallel_min=1).float_adam_update(*args) for t in (1, 2, 4)]
    for other in outs[1:]:
        for a, c in zip(outs[0], other, strict=True):
            assert a.tobytes() == c.tobytes()


@needs_native
def test_adams_formula_against_float64():
    lr, b1, b2, eps = HYPER
    t = 5
    p, g, m1, m2 = (RNG.standard_normal((64, 33)) for _ in range(4))
    m2 = np.abs(m2)
    got = NdArray(num_threads=2).float_adam_update(
        *(x.astype(np.float32) for x in (p, g, m1, m2)), lr, b1, b2, eps, t
    )
    wm1 = b1 * m1 + (1 - b1) * g
    wm2 = b2 * m2 + (1 - b2) * g * g
    mhat, vhat = wm1 / (1 - b1**t), wm2 / (1 - b2**t)
    wp = p - lr * mhat / (np.sqrt(vhat) + eps)
    np.testing.assert_allclose(got[1], wm1, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got[2], wm2, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got[0], wp, rtol=1e-5, atol=1e-6)
    assert math.isfinite(float(got[0].sum()))


@needs_native
def test_what_the_kernel_does_not_take_runs_the_default():
    b = NdArray(num_threads=2)
    p, g, m1, m2 = _inputs((40, 30), np.float32, False)
    cases = [
        (p, g[:, ::-1], m1, m2),  # a strided gradient
        (p.T, g.T, m1.T, m2.T),  # transposed views
        (p, g.astype(np.float64), m1, m2),  # mixed dtypes
    ]
    for args in cases:
        got = b.float_adam_update(*args, *HYPER, 2)
        want = _default(b, *args, *HYPER, 2)
        for x, y in zip(got, want, strict=True):
            np.testing.assert_array_equal(x, y)
    half = b.float_adam_update(p.astype(np.float16), g.astype(np.float16), None, None, *HYPER, 1)
    assert half[0].dtype == np.float16
