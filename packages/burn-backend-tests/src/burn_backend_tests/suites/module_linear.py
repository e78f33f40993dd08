"""Conformance: `linear` (through `burn_tensor.module.linear`, the user path) and its backward
primitives `linear_x_backward`, `linear_weight_backward`, `linear_bias_backward` and the last two
together, `linear_weight_bias_backward` (called on the
backend with primitives), against float64 numpy: inputs of rank 1-4, with and without bias, an
empty batch, d_in = 1, sizes past small GEMM blocks, and permuted / flipped / strided operands
(a backend may read transposed views in place).
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import Float, Tensor, module

from .._ctx import sample
from .module_conv import assert_close_scaled, assert_unchanged

# (id, x shape, d_out, bias)
CASES = [
    ("rank2", (5, 7), 3, True),
    ("rank2_no_bias", (4, 6), 5, False),
    ("rank3", (2, 3, 4), 6, True),
    ("rank4", (2, 1, 3, 5), 2, True),
    ("rank1", (4,), 3, True),
    ("empty_batch", (0, 4), 3, True),
    ("d_in_1", (6, 1), 4, True),
    ("wide", (3, 70), 40, True),
    ("tall", (65, 33), 17, True),
]
LAYOUTS = ["contiguous", "permuted", "flipped", "strided"]


def _case(cid):
    return next(c[1:] for c in CASES if c[0] == cid)


def _inputs(burn, cid, layout):
    shape, d_out, has_bias = _case(cid)
    d_in = shape[-1]
    x_t, x = burn.view_input(sample(shape, "unit", 1), Float, layout)
    w_t, w = burn.view_input(sample((d_in, d_out), "unit", 2), Float, layout)
    b_t, b = burn.view_input(sample((d_out,), "unit", 3), Float, layout)
    return (x_t, w_t, b_t if has_bias else None), (x, w, b if has_bias else None)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("cid", [c[0] for c in CASES])
def test_linear(burn, cid, layout):
    (x_t, w_t, b_t), (x, w, b) = _inputs(burn, cid, layout)
    y = module.linear(x_t, w_t, b_t)
    expected = x @ w + (0.0 if b is None else b)
    assert y.dims() == list(expected.shape)
    assert_close_scaled(burn, y, expected)
    assert_unchanged(burn, (x_t, w_t, b_t), (x, w, b))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("cid", [c[0] for c in CASES])
def test_linear_backward_primitives(burn, cid, layout):
    (x_t, w_t, _), (x, w, _) = _inputs(burn, cid, layout)
    shape, d_out, _ = _case(cid)
    g_t, g = burn.view_input(sample(shape[:-1] + (d_out,), "unit", 4), Float, layout)
    be = burn.backend
    xp, wp, gp = (t.into_primitive() for t in (x_t, w_t, g_t))
    res = lambda p: Tensor.from_primitive(p, Float, burn.device)
    m = int(np.prod(shape[:-1], dtype=np.int64))
    x2, g2 = x.reshape(m, shape[-1]), g.reshape(m, d_out)
    dx = res(be.linear_x_backward(wp, gp))
    assert dx.dims() == list(shape)
    assert_close_scaled(burn, dx, g @ w.T)
    dw = res(be.linear_weight_backward(xp, gp))
    assert dw.dims() == list(w.shape)
    assert_close_scaled(burn, dw, x2.T @ g2)
    db = res(be.linear_bias_backward(gp))
    assert db.dims() == [d_out]
    assert_close_scaled(burn, db, g2.sum(axis=0))
    dw2, db2 = (res(p) for p in be.linear_weight_bias_backward(xp, gp))  # the two in one op
    assert dw2.dims() == list(w.shape) and db2.dims() == [d_out]
    assert_close_scaled(burn, dw2, x2.T @ g2)
    assert_close_scaled(burn, db2, g2.sum(axis=0))
    assert_unchanged(burn, (x_t, w_t, g_t), (x, w, g))


def test_linear_rejects_mismatched_shapes_and_kinds(burn):
    x = burn.float(np.ones((2, 3)))
    with pytest.raises(Exception, match="linear"):
        module.linear(x, burn.float(np.ones((4, 2))))
    with pytest.raises(Exception, match=r"bias must be \[d_out\] = \[2\], got \[1, 2\]"):
        module.linear(x, burn.float(np.ones((3, 2))), burn.float(np.ones((1, 2))))
    with pytest.raises(Exception, match="weight/bias must be Float"):
        module.linear(x, burn.int(np.ones((3, 2))))
