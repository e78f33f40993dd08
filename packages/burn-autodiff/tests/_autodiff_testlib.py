"""Helpers shared by the burn-autodiff tests (imported by name: conftest puts this dir on sys.path)."""

from __future__ import annotations

import math

import numpy as np
from burn_ndarray import NdArray
from burn_tensor import TensorData

F64 = NdArray(float_dtype="float64")


def module_ops_missing() -> list[str]:
    """Module ops the NdArray backend does not implement yet (their gradient tests skip)."""
    return [n for n in NdArray.missing_ops() if not n.startswith(("float_", "int_", "bool_"))]


def ints(B, values):
    return B.int_from_data(TensorData(np.asarray(values, dtype=B.int_dtype.np)), B.device())


def bools(B, values):
    return B.bool_from_data(TensorData(np.asarray(values, dtype=np.bool_)), B.device())


RNG = np.random.default_rng(0)


def u(*shape, lo=0.5, hi=1.5, signed=True):
    """Values in [lo, hi] (random sign if `signed`): away from kinks at 0."""
    a = RNG.uniform(lo, hi, shape)
    if signed:
        a *= RNG.choice([-1.0, 1.0], shape)
    return a


def distinct(*shape):
    """Values with well separated entries (for max/sort/cummax: no ties within 0.1)."""
    n = math.prod(shape)
    return (RNG.permutation(n) * 0.37 - n * 0.15).reshape(shape)


def check_grads(B, fn, inputs, eps=1e-6, tol=1e-6):
    inner = B.inner
    dev = B.device()

    def from_np(BB, a):
        return BB.float_from_data(TensorData(np.asarray(a, np.float64)), BB.device())

    xs = [B.float_set_require_grad(from_np(B, a), True) for a in inputs]
    out = fn(B, *xs)
    out = out[0] if type(out) is tuple else out
    w = RNG.uniform(-1, 1, tuple(out.shape))
    loss = B.float_sum(B.float_mul(out, from_np(B, w)))
    grads = B.backward(loss)

    def f(arrays):
        o = fn(inner, *[from_np(inner, a) for a in arrays])
        o = o[0] if type(o) is tuple else o
        return float(np.sum(inner.float_into_data(o).array * w))

    for i, a in enumerate(inputs):
        g = B.grad(xs[i], grads)
        assert g is not None, f"input {i}: no gradient"
        analytic = np.asarray(inner.float_into_data(g).array)
        assert analytic.shape == a.shape and analytic.dtype == np.float64
        numeric = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus = [x.copy() for x in inputs]
            minus = [x.copy() for x in inputs]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            numeric[idx] = (f(plus) - f(minus)) / (2 * eps)
        na, nn = np.linalg.norm(analytic), np.linalg.norm(numeric)
        err = 0.0 if max(na, nn) < 1e-12 else np.linalg.norm(analytic - numeric) / max(na, nn)
        assert err < tol, f"input {i}: rel err {err:.2e}\nanalytic={analytic}\nnumeric={numeric}"
    assert dev is B.device()
