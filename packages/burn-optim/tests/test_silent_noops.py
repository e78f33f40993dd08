"""Training that would silently do nothing is refused (issue 32 item 4): gradients for another
model, and a step given the module an earlier step already updated (its result dropped)."""

from __future__ import annotations

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_ndarray import NdArray
from burn_nn import LinearConfig
from burn_tensor import Tensor

from burn_optim import AdamConfig, GradientsParams, SgdConfig


@pytest.fixture
def device():
    return Autodiff(NdArray(float_dtype="float64")).device()


def _grads(model, device):
    x = Tensor.from_data(np.array([[1.0, 2.0]]), device)
    return GradientsParams.from_grads(model.forward(x).sum().backward(), model)


def test_a_dropped_step_result_is_refused(device):
    model = LinearConfig(2, 1).init(device)
    optim = SgdConfig().init()
    optim.step(0.1, model, _grads(model, device))  # result dropped
    before = model.weight.val().numpy().copy()
    with pytest.raises(ValueError, match=r"model = optim.step\(lr, model, grads\)"):
        optim.step(0.1, model, _grads(model, device))
    np.testing.assert_array_equal(model.weight.val().numpy(), before)


def test_using_each_result_trains(device):
    model = LinearConfig(2, 1).init(device)
    optim = AdamConfig().init()
    w0 = model.weight.val().numpy().copy()
    for _ in range(3):
        model = optim.step(0.1, model, _grads(model, device))
    # A constant gradient g (= x, positive) makes Adam's bias-corrected step lr * g / (g + eps)
    # each time (Burn's eps 1e-5): three steps move each weight by 3 * that.
    g = np.array([[1.0], [2.0]])
    np.testing.assert_allclose(
        model.weight.val().numpy(), w0 - 3 * 0.1 * g / (g + 1e-5), rtol=0, atol=1e-9
    )


def test_gradients_of_another_model_are_refused(device):
    model = LinearConfig(2, 1).init(device)
    other = LinearConfig(2, 1).init(device)
    grads = _grads(other, device)
    with pytest.raises(ValueError, match="none of the 2 gradients belongs to a parameter"):
        SgdConfig().init().step(0.1, model, grads)


def test_no_gradients_at_all_leaves_the_module(device):
    model = LinearConfig(2, 1).init(device)
    assert SgdConfig().init().step(0.1, model, GradientsParams()) is model


def test_frozen_parameters_are_not_an_error(device):
    model = LinearConfig(2, 1).init(device).no_grad()
    grads = GradientsParams()
    for p in model.parameters():
        grads.register(p.id, Tensor.ones(p.val().dims(), device))
    assert SgdConfig().init().step(0.1, model, grads) is model
