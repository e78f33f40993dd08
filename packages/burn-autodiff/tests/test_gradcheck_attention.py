"""Gradients of the `attention` module op, float64: central differences (`check_grads`) and a
numpy float64 reference of dQ, dK, dV; the op is one recorded node whose backward is the
`attention_backward` primitive (softmax recomputed), not the composed graph."""

from __future__ import annotations

import numpy as np
import pytest
from _autodiff_testlib import F64, bools, check_grads, ints, u
from burn_autodiff import Autodiff, classify
from burn_tensor import Tensor, module

MASK = np.array([[[[0, 1, 0, 0, 1], [1, 1, 1, 1, 1], [0, 0, 0, 1, 0]]]], bool)


def _att(mask=None, causal=False, scale=None, dropout=0.0):
    def fn(B, q, k, v):
        m = None if mask is None else bools(B, mask)
        s = 1.0 / np.sqrt(q.shape[3]) if scale is None else scale
        if dropout:  # fixed seed words: the same keep mask on every call, a smooth function
            return B.attention(q, k, v, m, causal, s, dropout, ints(B, [31337, 4242]))
        return B.attention(q, k, v, m, causal, s)

    return fn


ROWS = [
    ("self", _att(), [u(1, 2, 4, 3), u(1, 2, 4, 3), u(1, 2, 4, 2)]),
    ("cross_causal", _att(causal=True), [u(2, 1, 3, 4), u(2, 1, 5, 4), u(2, 1, 5, 3)]),
    ("mask_scale", _att(MASK, scale=0.8), [u(1, 2, 3, 2), u(1, 2, 5, 2), u(1, 2, 5, 2)]),
    ("causal_more_queries", _att(causal=True), [u(1, 1, 5, 2), u(1, 1, 3, 2), u(1, 1, 3, 2)]),
    # issue 36: dropout on the weights; the rule hands the probability and seed to the backward
    ("dropout", _att(dropout=0.4), [u(1, 2, 4, 3), u(1, 2, 6, 3), u(1, 2, 6, 2)]),
    ("dropout_mask_causal", _att(MASK, True, 0.7, 0.5), [u(1, 2, 3, 2), u(1, 2, 5, 2), u(1, 2, 5, 2)]),
]


@pytest.mark.parametrize("name,fn,inputs", ROWS, ids=[r[0] for r in ROWS])
def test_gradcheck_attention(ad64, name, fn, inputs):
    check_grads(ad64, fn, [np.asarray(a, np.float64) for a in inputs])


def _numpy_grads(q, k, v, mask, g, scale):
    s = q @ k.swapaxes(2, 3) * scale
    s = np.where(mask, -np.inf, s)
    top = s.max(axis=3, keepdims=True)
    e = np.exp(s - np.where(np.isneginf(top), 0, top))
    p = e / np.maximum(e.sum(axis=3, keepdims=True), 1e-300)
    dp = g @ v.swapaxes(2, 3)
    ds = p * (dp - (p * dp).sum(axis=3, keepdims=True)) * scale
    return ds @ k, ds.swapaxes(2, 3) @ q, p.swapaxes(2, 3) @ g


def test_attention_grads_match_numpy_float64():
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=(2, 2, 3, 4)), rng.normal(size=(2, 2, 5, 4))
    v = rng.normal(size=(2, 2, 5, 3))
    mask = np.broadcast_to(MASK, (2, 2, 3, 5))
    g = rng.normal(size=(2, 2, 3, 3))
    d = Autodiff(F64).device()
    ts = [Tensor.from_data(a, d).require_grad() for a in (q, k, v)]
    out = module.attention(*ts, Tensor.from_bool(mask.copy(), d), scale=0.5)
    grads = (out * Tensor.from_data(g, d)).sum().backward()
    for t, want in zip(ts, _numpy_grads(q, k, v, mask, g, 0.5)):
        np.testing.assert_allclose(t.grad(grads).numpy(), want, rtol=1e-10, atol=1e-12)


def test_attention_is_one_node_with_its_own_backward():
    # A rule of its own (not the base-class decomposition differentiated through its parts),
    # and its backward is the recompute primitive: it never receives the probabilities.
    assert classify("attention") == "rule"
    assert classify("attention_backward") == "pass"
    calls = []
    inner = F64
    B = Autodiff(inner)
    orig = type(inner).attention_backward

    def spy(self, *args):
        calls.append(tuple(getattr(a, "shape", a) for a in args))
        return orig(self, *args)

    d = B.device()
    q = Tensor.from_data(np.ones((1, 1, 2, 3)), d).require_grad()
    try:
        object.__setattr__(inner, "attention_backward", spy.__get__(inner))
        module.attention(q, q, q, causal=True).sum().backward()
    finally:
        object.__delattr__(inner, "attention_backward")
    assert len(calls) == 1 and calls[0][:3] == ((1, 1, 2, 3),) * 3
