"""Backend extension with a custom backward: the Burn Book's fused matmul + add + relu."""

from __future__ import annotations

import numpy as np
import pytest
from burn_autodiff import Autodiff, BalancedCheckpointing, custom_op, reduce_to_shape
from burn_ndarray import NdArray
from burn_tensor import Distribution, Float, Tensor, activation


def _fused_numpy(lhs, rhs, bias):
    # The "kernel": one fused numpy expression on NdArray primitives.
    out = np.maximum(np.matmul(lhs._p, rhs._p) + bias._p, 0)
    return Tensor.from_primitive(out, Float, lhs.device)


def _reference(lhs, rhs, bias):
    return activation.relu(lhs.matmul(rhs) + bias)


def _backward(ctx, grad):
    lhs, rhs, bias = ctx.inputs
    # relu backward from the saved output, then matmul/add derivatives with broadcasting.
    grad_out = grad.mask_fill(ctx.output.lower_equal_elem(0.0), 0.0)
    grad_lhs = reduce_to_shape(grad_out.matmul(rhs.transpose()), lhs.dims())
    grad_rhs = reduce_to_shape(lhs.transpose().matmul(grad_out), rhs.dims())
    grad_bias = reduce_to_shape(grad_out, bias.dims())
    return grad_lhs, grad_rhs, grad_bias


fused_matmul_add_relu = custom_op(
    "fused_matmul_add_relu",
    forward={NdArray: _fused_numpy, "default": _reference},
    backward=_backward,
)


def _inputs(device):
    device.seed(1)
    lhs = Tensor.random([2, 4, 3], Distribution.normal(0, 1), device).require_grad()
    rhs = Tensor.random([1, 3, 5], Distribution.normal(0, 1), device).require_grad()
    bias = Tensor.random([1, 1, 5], Distribution.normal(0, 1), device).require_grad()
    return lhs, rhs, bias


@pytest.mark.parametrize("checkpointing", [None, BalancedCheckpointing()])
def test_fused_matmul_add_relu_matches_reference(checkpointing):
    device = Autodiff(NdArray(float_dtype="float64"), checkpointing=checkpointing).device()
    a = _inputs(device)
    b = _inputs(device)
    out = fused_matmul_add_relu(*a)
    ref = _reference(*b)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12)
    assert out.is_require_grad()
    ga, gb = (out * 1.5).sum().backward(), (ref * 1.5).sum().backward()
    for ta, tb in zip(a, b):
        np.testing.assert_allclose(ta.grad(ga).numpy(), tb.grad(gb).numpy(), rtol=1e-12)
        assert ta.grad(ga).dims() == ta.dims()


def test_forward_is_chosen_per_backend_and_untracked_inputs_record_nothing():
    assert fused_matmul_add_relu.forward_for(NdArray()) is _fused_numpy

    class Other(NdArray):
        name = "other"

    assert fused_matmul_add_relu.forward_for(Other()) is _fused_numpy  # MRO match
    # On a plain backend only the forward runs.
    dev = NdArray().device()
    lhs, rhs, bias = (t.inner() for t in _inputs(Autodiff(NdArray()).device()))
    out = fused_matmul_add_relu(lhs, rhs, bias)
    assert out.device is dev and out.dims() == [2, 4, 5]
    # Autodiff with untracked inputs: no node
    out = fused_matmul_add_relu(*(Tensor.from_inner(t) for t in (lhs, rhs, bias)))
    assert not out.is_require_grad()


def test_only_needed_grads_and_errors():
    calls = []

    def bw(ctx, g):
        calls.append([ctx.needs_grad(i) for i in range(2)])
        return g * ctx.inputs[1], None

    op = custom_op("scaled", forward=lambda x, s: x * s, backward=bw)
    device = Autodiff(NdArray()).device()
    x = Tensor.from_data([1.0, 2.0], device).require_grad()
    s = Tensor.from_data([3.0, 4.0], device)
    assert x.grad(op(x, s).sum().backward()).tolist() == [3.0, 4.0]
    assert calls == [[True, False]]
    bad = custom_op("bad", forward=lambda x: x, backward=lambda ctx, g: ())
    with pytest.raises(ValueError, match="backward returned 0 grads"):
        bad(x).sum().backward()
    none = custom_op("nofwd", forward={"cuda": lambda x: x}, backward=bw)
    with pytest.raises(NotImplementedError):
        none(x)
