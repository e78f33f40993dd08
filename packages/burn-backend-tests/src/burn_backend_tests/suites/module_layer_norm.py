"""Conformance: `layer_norm` (through `burn_tensor.module.layer_norm`) and its backward
primitive `layer_norm_backward`, against float64 references written per row: ranks 1-4, with
and without beta, d_model 1 (every output is beta), rows past a kernel's block of 64, a
constant row (variance 0: epsilon alone keeps it finite), non-contiguous inputs, d_model 512
and 1000; errors."""

from __future__ import annotations

import numpy as np
import pytest

from burn_tensor import TensorCheckError, module

from .._ctx import sample
from .._prim import prim, wrap
from .module_conv import assert_close_scaled

# (id, x shape, beta, epsilon)
CASES = [
    ("rank2", (5, 7), True, 1e-5),
    ("rank3_no_beta", (2, 3, 6), False, 1e-5),
    ("rank1", (9,), True, 1e-3),
    ("rank4", (2, 1, 3, 4), True, 1e-5),
    ("d1", (4, 1), True, 1e-5),
    ("many_rows", (3, 70, 33), True, 1e-6),
    # d_model 512 and 1000: a GPU's row kernels take several elements per work-item (few rows:
    # burn-cuda's CPU stand-in emulates every thread; burn-gpu's tests run hundreds of rows)
    ("d512", (3, 5, 512), True, 1e-5),
    ("d1000", (6, 1000), False, 1e-5),
]


def _case(cid):
    return next(c[1:] for c in CASES if c[0] == cid)


def reference(x, gamma, beta, eps):
    """float64 layer norm, one row at a time."""
    out = np.empty_like(x)
    flat, o = x.reshape(-1, x.shape[-1]), out.reshape(-1, x.shape[-1])
    for r in range(flat.shape[0]):
        row = flat[r]
        o[r] = (row - row.mean()) / np.sqrt(row.var() + eps) * gamma + (0 if beta is None else beta)
    return out


def reference_grads(x, gamma, g, eps):
    d = x.shape[-1]
    xf, gf = x.reshape(-1, d), g.reshape(-1, d)
    dx = np.empty_like(xf)
    dgamma, dbeta = np.zeros(d), np.zeros(d)
    for r in range(xf.shape[0]):
        rstd = 1.0 / np.sqrt(xf[r].var() + eps)
        xh = (xf[r] - xf[r].mean()) * rstd
        gg = gf[r] * gamma
        dx[r] = rstd * (gg - gg.mean() - xh * (gg * xh).mean())
        dgamma += gf[r] * xh
        dbeta += gf[r]
    return dx.reshape(x.shape), dgamma, dbeta


def _inputs(burn, cid, layout="contiguous"):
    shape, has_beta, eps = _case(cid)
    x_t, x = burn.view_input(sample(shape, "any", 1), layout=layout)
    g_t, g = burn.view_input(sample(shape[-1:], "unit", 2), layout=layout)
    b_t, b = burn.view_input(sample(shape[-1:], "unit", 3), layout=layout)
    return (x_t, g_t, b_t if has_beta else None), (x, g, b if has_beta else None), eps


@pytest.mark.parametrize("layout", ["contiguous", "permuted", "strided"])
@pytest.mark.parametrize("cid", [c[0] for c in CASES])
def test_layer_norm(burn, cid, layout):
    (x_t, g_t, b_t), (x, g, b), eps = _inputs(burn, cid, layout)
    out = module.layer_norm(x_t, g_t, b_t, eps)
    assert_close_scaled(burn, out, reference(x, g, b, eps))


def test_layer_norm_constant_row(burn):
    x = burn.float(np.full((2, 8), 3.0))
    out = module.layer_norm(x, burn.float(np.ones(8)), burn.float(np.full(8, 0.5)), 1e-5)
    burn.assert_close(out, np.full((2, 8), 0.5))


@pytest.mark.parametrize("cid", [c[0] for c in CASES])
def test_layer_norm_backward_primitive(burn, cid):
    (_, _, _), (x, g, _), eps = _inputs(burn, cid)
    go = burn.ref(sample(x.shape, "unit", 4))
    dx, dgamma, dbeta = burn.backend.layer_norm_backward(
        prim(burn, x), prim(burn, g), prim(burn, go), eps
    )
    for got, want in zip((dx, dgamma, dbeta), reference_grads(x, g, go, eps)):
        assert_close_scaled(burn, wrap(burn, got), want)


def test_layer_norm_errors(burn):
    x = burn.float(np.ones((2, 4)))
    with pytest.raises(TensorCheckError) as e:
        module.layer_norm(x, burn.float(np.ones(3)), burn.float(np.ones(5)), -1.0)
    msg = str(e.value)
    assert "gamma must be [d_model] = [4]" in msg and "beta must be" in msg and "epsilon" in msg
