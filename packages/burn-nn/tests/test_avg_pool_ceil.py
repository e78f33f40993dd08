"""AvgPool1d/2d with ceil_mode=True (raised NotImplementedError before issue 38), against a
numpy float64 loop over torch's definition (cross-checked once with torch 2.13's avg_pool2d)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_ndarray import NdArray
from burn_nn import AvgPool1dConfig, AvgPool2dConfig, PaddingConfig1d, PaddingConfig2d
from burn_tensor import Tensor

DEV = NdArray(float_dtype="float64").device()


def _out(size, k, s, p):
    o = math.ceil((size + 2 * p - k) / s) + 1
    if (o - 1) * s >= size + p:  # the last window must start inside the input or left pad
        o -= 1
    return o


def _ref(x, k, s, p, cip):
    """Per output window: sum of the input cells it covers / its count (torch's rule)."""
    n, c, h, w = x.shape
    oh, ow = _out(h, k, s, p), _out(w, k, s, p)
    out = np.zeros((n, c, oh, ow))
    for i, j in itertools.product(range(oh), range(ow)):
        hs, ws = i * s - p, j * s - p
        he, we = min(hs + k, h + p), min(ws + k, w + p)
        area = (he - hs) * (we - ws)
        h0, w0, h1, w1 = max(hs, 0), max(ws, 0), min(he, h), min(we, w)
        total = x[:, :, h0:h1, w0:w1].sum((2, 3))
        out[:, :, i, j] = total / (area if cip else (h1 - h0) * (w1 - w0))
    return out


def _ref1(x, k, s, p, cip):
    w = x.shape[-1]
    out = []
    for j in range(_out(w, k, s, p)):
        ws = j * s - p
        we = min(ws + k, w + p)
        w0, w1 = max(ws, 0), min(we, w)
        out.append(x[..., w0:w1].sum(-1) / ((we - ws) if cip else (w1 - w0)))
    return np.stack(out, -1)


CASES = [(k, s, p, cip) for k in (2, 3) for s in (2, 3) for p in (0, 1) for cip in (True, False)]


@pytest.mark.parametrize("k,s,p,cip", CASES)
def test_avg_pool2d_ceil_mode(k, s, p, cip):
    x = np.random.default_rng(k * 10 + s).normal(size=(2, 2, 7, 6))
    pool = AvgPool2dConfig(
        [k, k],
        strides=[s, s],
        padding=PaddingConfig2d.Explicit(p, p),
        count_include_pad=cip,
        ceil_mode=True,
    ).init()
    got = pool.forward(Tensor.from_data(x, DEV)).numpy()
    want = _ref(x, k, s, p, cip)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # 1-D: the same rule on the last dim
    pool1 = AvgPool1dConfig(
        k, stride=s, padding=PaddingConfig1d.Explicit(p), count_include_pad=cip, ceil_mode=True
    ).init()
    x1 = x[:, :, 0, :]
    got1 = pool1.forward(Tensor.from_data(x1, DEV)).numpy()
    np.testing.assert_allclose(got1, _ref1(x1, k, s, p, cip), rtol=1e-12)


def test_avg_pool_ceil_mode_gradient():
    # each input cell gets 1 / count of every window covering it
    ad = Autodiff(NdArray(float_dtype="float64")).device()
    x = Tensor.from_data(np.ones((1, 1, 5, 5)), ad).require_grad()
    pool = AvgPool2dConfig([2, 2], count_include_pad=False, ceil_mode=True).init()
    y = pool.forward(x)
    assert y.dims() == [1, 1, 3, 3]
    g = x.grad(y.sum().backward()).numpy()[0, 0]
    want = np.full((5, 5), 0.25)
    want[4, :4] = want[:4, 4] = 0.5  # edge windows cover 2 cells
    want[4, 4] = 1.0  # the corner window covers 1
    np.testing.assert_allclose(g, want, rtol=1e-12)
