"""Launch plans: a repeated layout reuses its plan, and a plan never leaks one call's values
(scalars, buffers, offsets, dtypes) into another."""

from __future__ import annotations

import numpy as np
import pytest
from burn_opencl import OpenCl, _plan
from burn_tensor import Tensor

B = OpenCl("cpu")
D = B.device()
RT = B._rt(None)


@pytest.fixture
def plans():
    RT.plans.clear()
    return RT.plans


def _t(a, dtype=np.float32):
    return Tensor.from_data(np.asarray(a, dtype), D)


def test_repeated_ops_reuse_one_plan_with_fresh_buffers_and_scalars(plans):
    a, b = _t(np.arange(6.0).reshape(2, 3)), _t(np.ones((2, 3)))
    first = a + b
    n = len(plans)
    second = a * 2.0
    third = a * 3.0  # same plan as `a * 2.0`, another scalar
    again = a + b
    assert len(plans) == n + 1  # add and mul_scalar: one plan each
    assert first.tolist() == again.tolist() == (np.arange(6.0).reshape(2, 3) + 1).tolist()
    assert first.into_primitive().buf is not again.into_primitive().buf
    assert second.tolist() == (np.arange(6.0).reshape(2, 3) * 2).tolist()
    assert third.tolist() == (np.arange(6.0).reshape(2, 3) * 3).tolist()


def test_layouts_that_differ_get_their_own_plans(plans):
    base = np.arange(12.0).reshape(3, 4)
    x = _t(base)
    full = x.exp()
    sliced = x[1:3].exp()  # same shape family, another offset
    transposed = x.transpose().exp()  # another strides
    np.testing.assert_allclose(full.numpy(), np.exp(base), rtol=1e-6)
    np.testing.assert_allclose(sliced.numpy(), np.exp(base[1:3]), rtol=1e-6)
    np.testing.assert_allclose(transposed.numpy(), np.exp(base.T), rtol=1e-6)
    # twice each: the plans answer the second round
    np.testing.assert_allclose(x[1:3].exp().numpy(), np.exp(base[1:3]), rtol=1e-6)
    np.testing.assert_allclose(x.transpose().exp().numpy(), np.exp(base.T), rtol=1e-6)
    assert len(plans) == 3


def test_reductions_and_matmul_plans(plans):
    base = np.arange(20.0).reshape(4, 5)
    x = _t(base)
    for _ in range(2):
        assert x.sum().tolist() == [base.sum()]
        assert x.mean_dim(1).numpy().ravel().tolist() == base.mean(1).tolist()
        assert x.sum_dim(0).numpy().ravel().tolist() == base.sum(0).tolist()
        np.testing.assert_allclose((x @ x.transpose()).numpy(), base @ base.T, rtol=1e-6)
    y = _t(base + 1)  # another buffer through the same plans
    assert y.sum().tolist() == [(base + 1).sum()]
    np.testing.assert_allclose((y @ y.transpose()).numpy(), (base + 1) @ (base + 1).T, rtol=1e-6)


def test_int_and_bool_scalars_and_mixed_dtypes(plans):
    i = Tensor.from_data(np.arange(5, dtype=np.int32), D)
    for s in (2, 7):
        assert (i * s).tolist() == (np.arange(5) * s).tolist()
    m = i.greater_elem(2)
    assert m.tolist() == [False, False, False, True, True]
    assert i.mask_fill(m, 9).tolist() == [0, 1, 2, 9, 9]
    assert i.mask_fill(m, -1).tolist() == [0, 1, 2, -1, -1]
    f = _t(np.arange(5.0))
    assert (f + i.float()).tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]


def test_the_cache_is_bounded(plans, monkeypatch):
    monkeypatch.setattr(_plan, "MAX_PLANS", 3)
    x = _t(np.ones(4))
    for op in (x.exp, x.log, x.sqrt, x.abs, x.neg):
        op()
    assert len(plans) <= 3
    assert x.exp().tolist() == pytest.approx([np.e] * 4)
