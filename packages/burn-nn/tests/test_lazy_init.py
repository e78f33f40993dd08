"""Lazy parameter initialization (Burn's `Param::uninitialized`; issue 38 item 6)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_ndarray import NdArray
from burn_nn import Conv2dConfig, LinearConfig, Param, lazy_init
from burn_tensor import Tensor

DEV = NdArray(float_dtype="float64").device()


def test_param_uninitialized_runs_its_init_once_on_first_use():
    calls = []

    def init(device, require_grad):
        calls.append((device, require_grad))
        return Tensor.ones([2, 3], device)

    p = Param.uninitialized(None, init, DEV, True, [2, 3])
    assert not p.is_initialized() and p.shape.dims == [2, 3] and p.device is DEV
    assert "uninitialized" in repr(p) and calls == []
    threads = [threading.Thread(target=p.val) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == [(DEV, True)] and p.is_initialized()
    assert p.val().tolist() == [[1.0] * 3] * 2


def test_lazy_initializer_shape_mismatch_is_named():
    p = Param.uninitialized(None, lambda d, rg: Tensor.ones([3], d), DEV, True, [2])
    with pytest.raises(ValueError, match=r"returned \[3\], declared shape \[2\]"):
        p.val()


def test_lazy_model_initializes_on_first_forward():
    with lazy_init():
        model = LinearConfig(4, 3).init(DEV)
        conv = Conv2dConfig([1, 2], [3, 3]).init(DEV)
    params = [p for _, p in model.named_parameters()] + [p for _, p in conv.named_parameters()]
    assert not any(p.is_initialized() for p in params)
    assert model.num_params() == 4 * 3 + 3 and not model.weight.is_initialized()
    y = model.forward(Tensor.ones([2, 4], DEV))
    assert y.dims() == [2, 3] and model.weight.is_initialized()
    # outside the block, params are built eagerly as before
    assert LinearConfig(4, 3).init(DEV).weight.is_initialized()


def test_loading_a_record_skips_the_initializer():
    trained = LinearConfig(4, 3).init(DEV)
    with lazy_init():
        fresh = LinearConfig(4, 3).init(DEV)
    loaded = fresh.load_record(trained.into_record())
    assert not fresh.weight.is_initialized()  # the template was never drawn
    np.testing.assert_array_equal(loaded.weight.val().numpy(), trained.weight.val().numpy())


def test_lazy_params_train_on_autodiff():
    ad = Autodiff(NdArray(float_dtype="float64")).device()
    with lazy_init():
        model = LinearConfig(2, 1).init(ad)
    assert model.weight.is_require_grad() and not model.weight.is_initialized()
    loss = model.forward(Tensor.ones([1, 2], ad)).sum()
    g = model.weight.val().grad(loss.backward())
    assert g is not None and g.numpy().tolist() == [[1.0], [1.0]]
    frozen = model.bias.set_require_grad(False)
    assert not frozen.is_require_grad()
