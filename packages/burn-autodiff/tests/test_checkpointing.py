"""BalancedCheckpointing: same gradients, fewer arrays kept by the graph."""

from __future__ import annotations

import numpy as np
from burn_autodiff import Autodiff, BalancedCheckpointing, graph_stats
from burn_ndarray import NdArray
from burn_tensor import Distribution, Tensor, activation

INNER = NdArray(float_dtype="float64")


def _model(device, seed=0):
    device.seed(seed)
    x = Tensor.random([16, 32], Distribution.normal(0, 1), device).require_grad()
    w = Tensor.random([32, 8], Distribution.normal(0, 1), device).require_grad()
    c = Tensor.random([16, 32], Distribution.normal(0, 1), device)  # untracked constant
    # A chain of memory-bound ops (elementwise, layout, activations) around compute-bound ones.
    h = (x.exp() * 0.1).sin() * x + c
    h = activation.gelu(h.tanh().reshape([32, 16]).transpose()).matmul(w)
    loss = activation.sigmoid(h).sum_dim(1).mean()
    return x, w, loss


def test_balanced_equals_none_and_keeps_less():
    none = Autodiff(INNER).device()
    bal = Autodiff(INNER, checkpointing=BalancedCheckpointing()).device()
    x0, w0, l0 = _model(none)
    x1, w1, l1 = _model(bal)
    s0, s1 = graph_stats(l0), graph_stats(l1)
    assert s0["nodes"] == s1["nodes"]
    assert s1["saved"] < s0["saved"] and s1["saved_bytes"] < s0["saved_bytes"], (s0, s1)
    g0, g1 = l0.backward(), l1.backward()
    np.testing.assert_allclose(l0.numpy(), l1.numpy())
    np.testing.assert_allclose(x0.grad(g0).numpy(), x1.grad(g1).numpy(), rtol=1e-12)
    np.testing.assert_allclose(w0.grad(g0).numpy(), w1.grad(g1).numpy(), rtol=1e-12)


def test_balanced_chain_keeps_only_compute_bound_outputs():
    bal = Autodiff(INNER, checkpointing=BalancedCheckpointing()).device()
    x = Tensor.ones([1000], bal).require_grad()
    y = x.exp().sin().cos().tanh() * 2.0
    assert graph_stats(y)["saved"] == 0  # all memory-bound with tracked parents: recompute
    loss = y.sum()
    assert graph_stats(loss)["saved"] == 1  # sum is compute-bound: its (1-element) output
    none = Autodiff(INNER).device()
    x2 = Tensor.ones([1000], none).require_grad()
    assert graph_stats((x2.exp().sin().cos().tanh() * 2.0).sum())["saved"] >= 3
    expected = x2.grad((x2.exp().sin().cos().tanh() * 2.0).sum().backward()).numpy()
    np.testing.assert_allclose(x.grad(loss.backward()).numpy(), expected, rtol=1e-12)


def test_untracked_parent_falls_back_to_saving():
    bal = Autodiff(INNER, checkpointing=BalancedCheckpointing()).device()
    x = Tensor.ones([3], bal).require_grad()
    c = Tensor.full([3], 2.0, bal)
    y = x * c  # c has no node: mul cannot be recomputed from the graph
    assert graph_stats(y)["saved"] >= 1
    assert x.grad(y.sum().backward()).tolist() == [2.0, 2.0, 2.0]
