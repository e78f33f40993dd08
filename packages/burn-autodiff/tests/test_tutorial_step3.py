"""The foundations tutorial's Step 3 ("Autodiff: Computing Gradients"), with its documented numbers.

- "A first gradient computation": x = [1, 2, 3] on `Autodiff<NdArray>`, y = x.powf_scalar(2.0)
  is [1, 4, 9], loss = y.sum() is 14.0, and x.grad(&grads) is dy/dx = 2x = [2.0, 4.0, 6.0].
- `model.valid()` / inner: the same values on the inner backend build no graph.
- Exercise 3: w = [0.5, -0.3, 0.8] (require_grad), x = [1, 2, 3] (data), y_hat = (w * x).sum(),
  loss = (y_hat - 2.5)^2; d loss / d w_i = 2 (y_hat - y) x_i, i.e. [-0.4, -0.8, -1.2] (hand-derived).
"""

from __future__ import annotations

import pytest
from burn_autodiff import Autodiff, BalancedCheckpointing, graph_stats
from burn_ndarray import NdArray
from burn_tensor import Tensor

STRATEGIES = [None, BalancedCheckpointing()]


@pytest.mark.parametrize("checkpointing", STRATEGIES, ids=["none", "balanced"])
def test_step3_first_gradient_sum_of_squares(checkpointing):
    device = Autodiff(NdArray(), checkpointing=checkpointing).device()  # float32, as the tutorial
    x = Tensor.from_floats([1.0, 2.0, 3.0], device).require_grad()
    y = x.clone().powf_scalar(2.0)
    assert y.tolist() == [1.0, 4.0, 9.0]  # "// [1, 4, 9]"
    loss = y.sum()
    assert loss.into_scalar() == 14.0  # "// 14.0"
    grads = loss.backward()
    x_grad = x.grad(grads)
    assert x_grad is not None, "x should have a gradient"
    assert x_grad.device is NdArray().device()  # a tensor of the inner backend
    assert x_grad.tolist() == [2.0, 4.0, 6.0]  # "dy/dx = 2x -> expected: [2.0, 4.0, 6.0]", exactly
    assert x.tolist() == [1.0, 2.0, 3.0]  # println!("x = ...") is unchanged by backward


def test_step3_sum_of_squares_through_mul_is_the_same():
    # x * x instead of powf_scalar: the same documented gradient.
    device = Autodiff(NdArray()).device()
    x = Tensor.from_floats([1.0, 2.0, 3.0], device).require_grad()
    assert x.grad((x * x).sum().backward()).tolist() == [2.0, 4.0, 6.0]


def test_step3_valid_builds_no_graph():
    # model.valid() / tensor.inner(): the same forward values on the inner backend, no tracking.
    device = Autodiff(NdArray()).device()
    x = Tensor.from_floats([1.0, 2.0, 3.0], device).require_grad()
    inner = x.inner()
    assert inner.device is NdArray().device()
    assert inner.powf_scalar(2.0).sum().into_scalar() == 14.0
    tracked = x.powf_scalar(2.0).sum()
    assert graph_stats(tracked)["nodes"] == 3  # leaf, powf_scalar, sum
    assert graph_stats(Tensor.from_inner(inner).powf_scalar(2.0).sum())["nodes"] == 0


@pytest.mark.parametrize("float_dtype", ["float32", "float64"])
def test_step3_exercise3_dot_product_mse(float_dtype):
    device = Autodiff(NdArray(float_dtype=float_dtype)).device()
    w = Tensor.from_floats([0.5, -0.3, 0.8], device).require_grad()
    x = Tensor.from_floats([1.0, 2.0, 3.0], device)  # data: no gradient
    y_hat = (w.clone() * x.clone()).sum()
    loss = (y_hat.clone() - 2.5).powf_scalar(2.0)
    grads = loss.backward()
    assert x.grad(grads) is None
    w_grad = w.grad(grads).tolist()
    tol = 1e-5 if float_dtype == "float32" else 1e-12  # float32 rounding of y_hat
    y_hat_value = float(y_hat.into_scalar())
    assert y_hat_value == pytest.approx(2.3, abs=tol)  # 0.5 - 0.6 + 2.4
    assert float(loss.into_scalar()) == pytest.approx(0.04, abs=tol)  # (2.3 - 2.5)^2
    # Hand-derived: 2 (y_hat - y) x_i = 2 * (-0.2) * [1, 2, 3]
    assert w_grad == pytest.approx([-0.4, -0.8, -1.2], abs=tol)
    # and the tutorial's manual check, with the computed y_hat
    assert w_grad == pytest.approx(
        [2.0 * (y_hat_value - 2.5) * xi for xi in (1.0, 2.0, 3.0)], abs=tol
    )
