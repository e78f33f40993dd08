"""`Tensor.backward(gradient)`: the pass seeded with a given output gradient (torch's
`out.backward(g)`), checked against hand-derived gradients and against the `(out * g).sum()` form."""

from __future__ import annotations

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_ndarray import NdArray
from burn_tensor import Tensor, TensorCheckError, autocast


@pytest.fixture
def dev():
    return Autodiff(NdArray(num_devices=2)).device(0)


def test_seeded_gradients_are_the_hand_derived_ones(dev):
    xs = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], dtype=np.float32)
    gs = np.array([[1.0, 0.0, -1.0], [2.0, 0.25, 3.0]], dtype=np.float32)
    x = Tensor.from_data(xs, dev).require_grad()
    grads = (x * x).exp().backward(Tensor.from_data(gs, dev))
    # d/dx exp(x^2) = 2x exp(x^2), times the seed
    want = gs.astype(np.float64) * 2 * xs * np.exp(xs.astype(np.float64) ** 2)
    np.testing.assert_allclose(x.grad(grads).to_data(), want, rtol=1e-5)


def test_seed_matches_the_multiply_and_sum_form(dev):
    rng = np.random.default_rng(0)
    a, b, g = (rng.standard_normal(s).astype(np.float32) for s in ((4, 5), (3, 5), (4, 3)))
    w = Tensor.from_data(b, dev).require_grad()
    x = Tensor.from_data(a, dev).require_grad()
    seed = Tensor.from_data(g, dev)
    seeded = (x.matmul(w.transpose()) * 2).backward(seed)
    summed = ((x.matmul(w.transpose()) * 2) * seed).sum().backward()
    for t in (x, w):
        np.testing.assert_allclose(t.grad(seeded).to_data(), t.grad(summed).to_data(), rtol=1e-6)
    # x.grad = 2 g w; w.grad = 2 g^T x (float64 by hand)
    np.testing.assert_allclose(x.grad(seeded).to_data(), 2 * g.astype(np.float64) @ b, rtol=1e-5)
    np.testing.assert_allclose(w.grad(seeded).to_data(), 2 * g.T.astype(np.float64) @ a, rtol=1e-5)


def test_seed_on_the_inner_device_and_a_tracked_seed(dev):
    x = Tensor.from_data([1.0, 2.0], dev).require_grad()
    inner_seed = Tensor.from_data([3.0, -1.0], dev).inner()
    assert x.grad((x * 3).backward(inner_seed)).to_data().tolist() == [9.0, -3.0]
    # a tracked seed is used for its values only: no gradient reaches it
    s = Tensor.from_data([1.0, 1.0], dev).require_grad()
    grads = (x * 2).backward(s)
    assert x.grad(grads).to_data().tolist() == [2.0, 2.0]
    assert s.grad(grads) is None


def test_seed_under_a_loss_scale_is_scaled(dev):
    x = Tensor.from_data([1.0, 2.0], dev).require_grad()
    with autocast("float16", loss_scale=8.0):  # elementwise ops stay float32 under autocast
        grads = (x * x).backward(Tensor.from_data([1.0, 0.5], dev))
    assert x.grad(grads).to_data().tolist() == [16.0, 16.0]  # 2x * g * 8


@pytest.mark.parametrize(
    "bad, message",
    [
        ([1.0, 2.0, 3.0], "expected a Float tensor, got list"),
        ("int", "expected a Float tensor, got a tensor of kind Int"),
        ("short", "expected shape [3] float32, got [2] float32"),
        ("f64", "expected shape [3] float32, got [3] float64"),
        ("other", "expected a tensor on"),
    ],
)
def test_bad_seeds_are_refused_naming_what_is_wrong(dev, bad, message):
    x = Tensor.from_data([1.0, 2.0, 3.0], dev).require_grad()
    y = x * x
    seeds = {
        "int": lambda: Tensor.from_data(np.array([1, 2, 3]), dev),
        "short": lambda: Tensor.from_data([1.0, 2.0], dev),
        "f64": lambda: Tensor.from_data([1.0, 2.0, 3.0], dev).cast("float64"),
        "other": lambda: Tensor.from_data([1.0, 2.0, 3.0], dev.backend.device(1)),
    }
    seed = seeds[bad]() if isinstance(bad, str) else bad
    with pytest.raises(TensorCheckError, match="backward") as err:
        y.backward(seed)
    assert message in str(err.value)
    # the graph is untouched by the refusal: a good seed still works
    assert x.grad(y.backward(Tensor.from_data([1.0, 1.0, 1.0], dev))) is not None
