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


def check_grads(B, fn, inputs, eps=1e-6, tol=1e-6, sample=None):
    """Autodiff gradients of `sum(fn(B, *inputs) * W)` (random W) against central differences.

    Every input gets two checks, both computed on the inner backend in float64:
    - per coordinate: all coordinates, or `sample` random ones (large inputs, e.g. the 32-channel
      convolutions that reach NdArray's Winograd path), compared by relative norm error;
    - directional: (L(x + eps*v) - L(x - eps*v)) / (2 eps) against <grad, v> for a random v,
      which tests the whole gradient at the cost of two evaluations.
    """
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

    def moved(i, delta):
        return [x + delta if k == i else x for k, x in enumerate(inputs)]

    for i, a in enumerate(inputs):
        g = B.grad(xs[i], grads)
        assert g is not None, f"input {i}: no gradient"
        analytic = np.asarray(inner.float_into_data(g).array)
        assert analytic.shape == a.shape and analytic.dtype == np.float64, (
            f"input {i}: gradient {analytic.shape} {analytic.dtype}, input {a.shape} float64"
        )
        coords = list(np.ndindex(a.shape))
        if sample is not None and sample < len(coords):
            coords = [coords[k] for k in RNG.choice(len(coords), sample, replace=False)]
        numeric = np.array([_partial(f, moved, i, a, idx, eps) for idx in coords])
        picked = np.array([analytic[idx] for idx in coords])
        na, nn = np.linalg.norm(picked), np.linalg.norm(numeric)
        err = 0.0 if max(na, nn) < 1e-12 else np.linalg.norm(picked - numeric) / max(na, nn)
        assert err < tol, f"input {i}: rel err {err:.2e}\nanalytic={picked}\nnumeric={numeric}"
        v = RNG.uniform(-1, 1, a.shape)
        d_num = (f(moved(i, eps * v)) - f(moved(i, -eps * v))) / (2 * eps)
        d_ana = float(np.sum(analytic * v))
        # Scale: |<g, v>| for a typical (not cancelling) v, so a near-zero projection of a
        # nonzero gradient does not turn rounding noise into a large relative error.
        scale = max(
            abs(d_ana), abs(d_num), np.linalg.norm(analytic) * np.linalg.norm(v) / a.size**0.5
        )
        derr = 0.0 if scale < 1e-12 else abs(d_ana - d_num) / scale
        assert derr < tol, f"input {i}: directional derivative {d_ana} vs numeric {d_num}"
    assert dev is B.device()


def _partial(f, moved, i, a, idx, eps):
    e = np.zeros_like(a)
    e[idx] = eps
    return (f(moved(i, e)) - f(moved(i, -e))) / (2 * eps)
