"""A second backward() through a graph already used raises (issue 32 item 4): the first pass
frees the graph, so a second one would silently give no gradients."""

from __future__ import annotations

import pytest
from burn_ndarray import NdArray
from burn_tensor import Tensor

from burn_autodiff import Autodiff


@pytest.fixture
def device():
    return Autodiff(NdArray(float_dtype="float64")).device()


def test_second_backward_of_the_same_loss(device):
    x = Tensor.from_data([1.0, 2.0], device).require_grad()
    loss = (x * 3.0).sum()
    assert x.grad(loss.backward()).tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match="this tensor's graph was already used"):
        loss.backward()


def test_backward_through_a_consumed_middle(device):
    x = Tensor.from_data([1.0, 2.0], device).require_grad()
    y = x * 3.0
    y.sum().backward()  # frees y's node
    with pytest.raises(RuntimeError, match="part of this tensor's graph was already used"):
        (y * 2.0).sum().backward()


def test_a_refused_pass_clears_nothing(device):
    # the unused branch's nodes keep their rules: a backward from it still works
    x = Tensor.from_data([1.0, 2.0], device).require_grad()
    y = x * 3.0
    z = y.exp()
    y.sum().backward()
    w = x * 5.0
    with pytest.raises(RuntimeError):
        (w + z).sum().backward()
    assert x.grad(w.sum().backward()).tolist() == [5.0, 5.0]
