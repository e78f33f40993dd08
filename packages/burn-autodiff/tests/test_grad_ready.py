"""grad_ready(): each watched leaf's gradient is reported once, final, during backward(), in
an order where a leaf used first comes last, equal to the gradient backward() returns."""

import numpy as np
import pytest
from burn_autodiff import Autodiff, grad_ready
from burn_ndarray import NdArray
from burn_tensor import Tensor


def _chain():
    d = Autodiff(NdArray()).device()
    rng = np.random.default_rng(0)
    ws = [Tensor.from_data(rng.standard_normal((3, 3)), d).require_grad() for _ in range(3)]
    x = Tensor.from_data(rng.standard_normal((2, 3)), d)
    return x, ws


def test_reported_in_reverse_order_and_equal_to_backward():
    x, ws = _chain()
    seen = []
    h = x
    with grad_ready(ws, lambda i, g: seen.append((i, g.to_data().numpy().copy()))):
        for w in ws:
            h = (h.matmul(w)).tanh()
        h = h + h.matmul(ws[0])  # ws[0] used twice: reported once, with both uses summed
        grads = h.sum().backward()
    order = [i for i, _ in seen]
    # Each once; ws[0] (first used) last. Between leaves of unrelated branches the order is the
    # pass's topological order, which need not be the reverse of field order.
    assert sorted(order) == [0, 1, 2] and order[-1] == 0
    for i, g in seen:
        np.testing.assert_array_equal(g, ws[i].grad(grads).to_data().numpy())


def test_unreached_leaf_not_reported_and_watch_ends_with_block():
    x, ws = _chain()
    seen = []
    with grad_ready(ws, lambda i, g: seen.append(i)):
        x.matmul(ws[1]).sum().backward()
    x.matmul(ws[0]).sum().backward()  # outside the block: nothing reported
    assert seen == [1]


def test_non_autodiff_tensor_refused():
    t = Tensor.from_data([1.0], NdArray().device(0))
    with pytest.raises(TypeError, match=r"tensors\[0\].*not a tensor on an Autodiff device"):
        with grad_ready([t], lambda i, g: None):
            pass
