"""Module ops of OpenCl (conv, pools, interpolation, unfold, embedding and their backward
primitives) against float64 results of NdArray, whose module ops burn-ndarray checks against
nested-loop numpy references. Each op runs over layouts that exercise strides, padding,
dilation, groups and edge cases; the backward primitives are called directly.

(Until the conformance suite covers module ops itself; it then runs on OpenCl automatically.)
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_tensor import (
    ConvOptions,
    ConvTransposeOptions,
    InterpolateOptions,
    TensorData,
    UnfoldOptions,
)

REF = NdArray(float_dtype="float64", int_dtype="int64")
RNG = np.random.default_rng(7)


def _f(B, a):
    return B.float_from_data(TensorData(np.asarray(a, dtype=B.float_dtype.np)), B.device())


def _i(B, a):
    return B.int_from_data(TensorData(np.asarray(a, dtype=B.int_dtype.np)), B.device())


def _np(B, p):
    if p.dtype.kind == "f":
        return B.float_into_data(p).array.astype(np.float64)
    return B.int_into_data(p).array.astype(np.int64)


def _run(burn_backend, fn, *inputs, ints=()):
    """fn on OpenCl and on the float64 reference, with the same inputs; compare every output."""
    B = burn_backend
    outs = []
    for backend in (B, REF):
        args = [_i(backend, a) if k in ints else _f(backend, a) for k, a in enumerate(inputs)]
        out = fn(backend, *args)
        outs.append(out if isinstance(out, tuple) else (out,))
    tol = 1e-9 if B.float_dtype.value == "float64" else 2e-4
    for got, want in zip(*outs):
        g, w = _np(B, got), _np(REF, want)
        assert g.shape == w.shape
        scale = max(1.0, float(np.abs(w).max(initial=0.0)))
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale)


CONV = [
    ((2, 3, 7, 6), (4, 3, 3, 2), ConvOptions((1, 1), (0, 0), (1, 1), 1)),
    ((1, 4, 8, 7), (6, 2, 3, 3), ConvOptions((2, 1), (1, 2), (1, 2), 2)),
    ((2, 2, 5, 5), (2, 1, 2, 2), ConvOptions((1, 2), (1, 1), (2, 1), 2)),
]


@pytest.mark.parametrize("xs,ws,opt", CONV)
def test_conv2d_and_backward(burn_backend, xs, ws, opt):
    x, w, b = RNG.normal(size=xs), RNG.normal(size=ws), RNG.normal(size=ws[0])
    _run(burn_backend, lambda B, x, w, b: B.conv2d(x, w, b, opt), x, w, b)
    _run(burn_backend, lambda B, x, w: B.conv2d(x, w, None, opt), x, w)
    y = REF.conv2d(_f(REF, x), _f(REF, w), None, opt)
    g = RNG.normal(size=y.shape)
    _run(burn_backend, lambda B, x, w, g: B.conv2d_x_backward(x, w, g, opt), x, w, g)
    _run(burn_backend, lambda B, x, w, g: B.conv2d_weight_backward(x, w, g, opt), x, w, g)
    _run(burn_backend, lambda B, b, g: B.conv2d_bias_backward(None, None, b, g), b, g)


CONVT = [
    ((2, 3, 4, 5), (3, 2, 3, 3), ConvTransposeOptions((1, 1), (0, 0), (0, 0), (1, 1), 1)),
    ((1, 4, 3, 4), (4, 3, 3, 2), ConvTransposeOptions((2, 3), (1, 0), (1, 2), (1, 1), 2)),
    ((2, 2, 3, 3), (2, 1, 2, 3), ConvTransposeOptions((2, 1), (0, 1), (0, 0), (2, 2), 1)),
]


@pytest.mark.parametrize("xs,ws,opt", CONVT)
def test_conv_transpose2d_and_backward(burn_backend, xs, ws, opt):
    x, w = RNG.normal(size=xs), RNG.normal(size=ws)
    b = RNG.normal(size=ws[1] * opt.groups)
    _run(burn_backend, lambda B, x, w, b: B.conv_transpose2d(x, w, b, opt), x, w, b)
    y = REF.conv_transpose2d(_f(REF, x), _f(REF, w), None, opt)
    g = RNG.normal(size=y.shape)
    _run(burn_backend, lambda B, w, g: B.conv_transpose2d_x_backward(w, g, opt), w, g)
    _run(
        burn_backend,
        lambda B, x, w, g: B.conv_transpose2d_weight_backward(x, w, g, opt),
        x,
        w,
        g,
    )


def test_conv1d_family(burn_backend):
    x, w, b = RNG.normal(size=(2, 3, 9)), RNG.normal(size=(4, 3, 3)), RNG.normal(size=4)
    _run(
        burn_backend,
        lambda B, x, w, b: B.conv1d(x, w, b, ConvOptions((2,), (1,), (2,), 1)),
        x,
        w,
        b,
    )
    wt = RNG.normal(size=(3, 2, 3))
    opt = ConvTransposeOptions((2,), (1,), (1,), (1,), 1)
    _run(burn_backend, lambda B, x, w: B.conv_transpose1d(x, w, None, opt), x, wt)


POOL = [((2, 3, 7, 6), (3, 2), (2, 1), (1, 1)), ((1, 2, 5, 5), (2, 2), (2, 2), (0, 0))]


@pytest.mark.parametrize("shape,k,s,p", POOL)
@pytest.mark.parametrize("include", [True, False])
def test_avg_pool2d_and_backward(burn_backend, shape, k, s, p, include):
    x = RNG.normal(size=shape)
    _run(burn_backend, lambda B, x: B.avg_pool2d(x, k, s, p, include), x)
    y = REF.avg_pool2d(_f(REF, x), k, s, p, include)
    g = RNG.normal(size=y.shape)
    _run(burn_backend, lambda B, x, g: B.avg_pool2d_backward(x, g, k, s, p, include), x, g)


@pytest.mark.parametrize("shape,k,s,p", POOL)
@pytest.mark.parametrize("d", [(1, 1), (2, 1)])
def test_max_pool2d_with_indices_and_backward(burn_backend, shape, k, s, p, d):
    x = RNG.permutation(int(np.prod(shape))).reshape(shape) * 0.5  # no ties
    _run(burn_backend, lambda B, x: B.max_pool2d_with_indices(x, k, s, p, d), x)
    y, idx = REF.max_pool2d_with_indices(_f(REF, x), k, s, p, d)
    g = RNG.normal(size=y.shape)
    idx = REF.int_into_data(idx).array

    def back(B, x, g, i):
        return B.max_pool2d_with_indices_backward(x, k, s, p, d, g, i)

    _run(burn_backend, back, x, g, idx, ints=(2,))


def test_pool1d_family(burn_backend):
    x = RNG.normal(size=(2, 3, 9))
    _run(burn_backend, lambda B, x: B.avg_pool1d(x, 3, 2, 1, True), x)
    _run(burn_backend, lambda B, x: B.max_pool1d_with_indices(x, 3, 2, 1, 2), x)
    _run(burn_backend, lambda B, x: B.adaptive_avg_pool1d(x, 4), x)


@pytest.mark.parametrize("out_hw", [(1, 1), (3, 2), (5, 7)])
def test_adaptive_avg_pool2d_and_backward(burn_backend, out_hw):
    x = RNG.normal(size=(2, 3, 5, 6))
    _run(burn_backend, lambda B, x: B.adaptive_avg_pool2d(x, out_hw), x)
    g = RNG.normal(size=(2, 3, *out_hw))
    _run(burn_backend, lambda B, x, g: B.adaptive_avg_pool2d_backward(x, g), x, g)


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
@pytest.mark.parametrize("out_hw", [(7, 9), (2, 3), (1, 1)])
def test_interpolate_and_backward(burn_backend, mode, out_hw):
    opt = InterpolateOptions(mode)
    x = RNG.normal(size=(2, 2, 4, 5))
    _run(burn_backend, lambda B, x: B.interpolate(x, out_hw, opt), x)
    g = RNG.normal(size=(2, 2, *out_hw))
    _run(burn_backend, lambda B, x, g: B.interpolate_backward(x, g, out_hw, opt), x, g)


def test_unfold4d(burn_backend):
    x = RNG.normal(size=(2, 3, 6, 5))
    opt = UnfoldOptions((2, 1), (1, 0), (1, 2))
    _run(burn_backend, lambda B, x: B.unfold4d(x, (3, 2), opt), x)


def test_embedding_and_backward(burn_backend):
    w = RNG.normal(size=(6, 4))
    idx = np.array([[0, 5, 2], [2, 2, 1]])
    _run(burn_backend, lambda B, w, i: B.embedding(w, i), w, idx, ints=(1,))
    g = RNG.normal(size=(2, 3, 4))
    _run(burn_backend, lambda B, w, g, i: B.embedding_backward(w, g, i), w, g, idx, ints=(2,))


def test_activation_backwards(burn_backend):
    x, g = RNG.normal(size=(3, 5)), RNG.normal(size=(3, 5))
    for name in ("gelu_backward", "log_sigmoid_backward"):
        _run(burn_backend, lambda B, x, g, n=name: getattr(B, n)(x, g), x, g)
    y = np.abs(x) * np.sign(RNG.normal(size=(3, 5)))
    for name in ("relu_backward", "sigmoid_backward"):
        _run(burn_backend, lambda B, y, g, n=name: getattr(B, n)(y, g), y, g)
