"""grad_ready(): each watched leaf's gradient is reported once, final, during backward(), as soon
as the pass has run the leaf's last consumer (reverse use order), equal to the gradient backward() returns."""

import numpy as np
import pytest
from burn_autodiff import Autodiff, custom_op, grad_ready
from burn_ndarray import NdArray
from burn_tensor import Tensor

# Identity whose backward logs its tag: shows when the pass runs each layer's backward.
MARK = custom_op(
    "grad_ready_mark",
    forward=lambda x, events, tag: x,
    backward=lambda ctx, g: (ctx.options["events"].append(ctx.options["tag"]) or g,),
)


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
    # Each once, as soon as its last use has run: reverse use order (ws[0], used first and
    # last, when the pass is back at its first use).
    assert [i for i, _ in seen] == [2, 1, 0]
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


def test_reported_before_the_earlier_layers_backward_runs():
    """A weight's gradient is reported before the backward of the layers in front of it: the
    data-parallel overlap depends on it (without, every gradient came at the end)."""
    x, ws = _chain()
    events = []
    h = x
    with grad_ready(ws, lambda i, g: events.append(f"w{i}")):
        for i, w in enumerate(ws):
            h = MARK(h.matmul(w).tanh(), events=events, tag=f"layer{i}")
        h.sum().backward()
    # layer2's output backward, then w2's gradient, before layer1's backward ...
    assert events == ["layer2", "w2", "layer1", "w1", "layer0", "w0"]
