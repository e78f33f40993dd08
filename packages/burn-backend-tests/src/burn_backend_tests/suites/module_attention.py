"""Conformance: `attention` (through `burn_tensor.module.attention`), its backward primitive
`attention_backward` and the flash pair `attention_with_lse` / `attention_lse_backward`, against
a float64 reference written as a loop over queries.

Cases: self- and cross-attention (seq_q != seq_k), Burn's bool masks (True = masked out) of
full shape and broadcast ([batch, 1, 1, seq_k] padding), causal with seq_q = seq_k, < seq_k (a
query block continuing cached keys) and > seq_k (queries that see no key get 0), a query whose
keys are all masked (0, not NaN), a custom scale, sequences past a kernel's block sizes, and
non-contiguous inputs. Errors: one TensorCheckError naming the op and each violation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from burn_tensor import Bool, TensorCheckError, module

from .._ctx import sample
from .._prim import prim, wrap
from .module_conv import assert_close_scaled

# (id, (batch, heads, seq_q, seq_k, head_dim, val_dim), mask, causal, scale)
# mask: None, "pad" ([b, 1, 1, sk]), "full" ([b, h, sq, sk] with query 0 of every head all masked)
CASES = [
    ("self", (2, 3, 5, 5, 4, 4), None, False, None),
    ("cross", (1, 2, 3, 7, 4, 6), None, False, None),
    ("causal", (2, 2, 6, 6, 3, 3), None, True, None),
    ("causal_cached_keys", (1, 2, 3, 8, 4, 2), None, True, None),
    ("causal_more_queries", (1, 1, 6, 3, 2, 2), None, True, None),
    ("pad_mask", (2, 2, 4, 5, 3, 3), "pad", False, None),
    ("full_mask_row_masked", (2, 2, 4, 6, 3, 5), "full", False, None),
    ("mask_and_causal", (1, 2, 5, 5, 4, 4), "full", True, 0.3),
    ("scale", (1, 1, 4, 4, 8, 8), None, False, 2.0),
    ("long_keys", (1, 1, 9, 1100, 4, 3), "pad", False, None),
    ("long_queries_causal", (1, 2, 140, 140, 4, 4), None, True, None),
]


def _case(cid):
    return next(c[1:] for c in CASES if c[0] == cid)


def _mask(kind, b, h, sq, sk, seed):
    if kind is None:
        return None
    g = np.random.default_rng(seed)
    if kind == "pad":
        m = g.random((b, 1, 1, sk)) < 0.3
        m[..., 0] = False  # every query sees a key
        return m
    m = g.random((b, h, sq, sk)) < 0.4
    m[:, :, 0, :] = True
    return m


def reference(q, k, v, mask, causal, scale):
    """(output, probabilities) in float64, one query at a time: scores, -inf where masked,
    softmax over the visible keys (all hidden: zeros)."""
    b, h, sq, _ = q.shape
    sk = k.shape[2]
    out = np.zeros((b, h, sq, v.shape[3]))
    probs = np.zeros((b, h, sq, sk))
    m = None if mask is None else np.broadcast_to(mask, (b, h, sq, sk))
    for bi, hi, i in np.ndindex(b, h, sq):
        visible = np.ones(sk, bool)
        if m is not None:
            visible &= ~m[bi, hi, i]
        if causal:
            visible &= np.arange(sk) <= i + (sk - sq)
        if not visible.any():
            continue
        s = k[bi, hi][visible] @ q[bi, hi, i] * scale
        e = np.exp(s - s.max())
        probs[bi, hi, i, visible] = e / e.sum()
        out[bi, hi, i] = probs[bi, hi, i] @ v[bi, hi]
    return out, probs


def reference_grads(q, k, v, probs, g, scale):
    """(dq, dk, dv) in float64 from the probabilities."""
    dv = probs.swapaxes(2, 3) @ g
    dp = g @ v.swapaxes(2, 3)
    ds = probs * (dp - (probs * dp).sum(axis=3, keepdims=True)) * scale
    return ds @ k, ds.swapaxes(2, 3) @ q, dv


def _inputs(burn, cid, layout="contiguous"):
    (b, h, sq, sk, d, dv), mk, causal, scale = _case(cid)
    q_t, q = burn.view_input(sample((b, h, sq, d), "unit", 1), layout=layout)
    k_t, k = burn.view_input(sample((b, h, sk, d), "unit", 2), layout=layout)
    v_t, v = burn.view_input(sample((b, h, sk, dv), "unit", 3), layout=layout)
    m = _mask(mk, b, h, sq, sk, 4)
    m_t = None if m is None else burn.tensor(m, Bool, layout)
    s = 1.0 / math.sqrt(d) if scale is None else scale
    return (q_t, k_t, v_t, m_t), (q, k, v, m), causal, scale, s


@pytest.mark.parametrize("cid", [c[0] for c in CASES])
def test_attention(burn, cid):
    (q_t, k_t, v_t, m_t), (q, k, v, m), causal, scale, s = _inputs(burn, cid)
    out = module.attention(q_t, k_t, v_t, m_t, causal=causal, scale=scale)
    assert_close_scaled(burn, out, reference(q, k, v, m, causal, s)[0])


@pytest.mark.parametrize("layout", ["permuted", "flipped", "strided"])
@pytest.mark.parametrize("cid", ["cross", "mask_and_causal"])
def test_attention_views(burn, cid, layout):
    (q_t, k_t, v_t, m_t), (q, k, v, m), causal, scale, s = _inputs(burn, cid, layout)
    out = module.attention(q_t, k_t, v_t, m_t, causal=causal, scale=scale)
    assert_close_scaled(burn, out, reference(q, k, v, m, causal, s)[0])


def test_attention_fully_masked_query_is_zero(burn):
    (q_t, k_t, v_t, m_t), _, causal, scale, _ = _inputs(burn, "full_mask_row_masked")
    out = module.attention(q_t, k_t, v_t, m_t, causal=causal, scale=scale).numpy()
    assert np.all(out[:, :, 0] == 0) and not np.isnan(out).any()


@pytest.mark.parametrize("cid", [c[0] for c in CASES])
def test_attention_backward_primitive(burn, cid):
    (_, _, _, m_t), (q, k, v, m), causal, _, s = _inputs(burn, cid)
    out, probs = reference(q, k, v, m, causal, s)
    g = burn.ref(sample(out.shape, "unit", 5))
    mp = None if m_t is None else m_t.into_primitive()
    dq, dk, dv = burn.backend.attention_backward(
        prim(burn, q), prim(burn, k), prim(burn, v), mp, prim(burn, g), causal, s
    )
    for got, want in zip((dq, dk, dv), reference_grads(q, k, v, probs, g, s)):
        assert_close_scaled(burn, wrap(burn, got), want)


@pytest.mark.parametrize("cid", ["cross", "mask_and_causal", "causal_more_queries"])
def test_attention_with_lse_and_its_backward_primitive(burn, cid):
    # the flash pair (declared ops): the forward gives attention's output and its saved row
    # statistic (a backend's kernel) or None (the default); the backward from them gives dq, dk, dv
    (_, _, _, m_t), (q, k, v, m), causal, _, s = _inputs(burn, cid)
    out, probs = reference(q, k, v, m, causal, s)
    mp = None if m_t is None else m_t.into_primitive()
    qp, kp, vp = prim(burn, q), prim(burn, k), prim(burn, v)
    got, lse = burn.backend.attention_with_lse(qp, kp, vp, mp, causal, s)
    assert_close_scaled(burn, wrap(burn, got), out)
    g = burn.ref(sample(out.shape, "unit", 5))
    grads = burn.backend.attention_lse_backward(qp, kp, vp, got, lse, mp, prim(burn, g), causal, s)
    for got_grad, want in zip(grads, reference_grads(q, k, v, probs, g, s)):
        assert_close_scaled(burn, wrap(burn, got_grad), want)


def test_attention_empty_keys_give_zeros(burn):
    q = burn.float(np.ones((1, 2, 3, 4)))
    kv = burn.float(np.ones((1, 2, 0, 4)))
    burn.assert_close(module.attention(q, kv, kv), np.zeros((1, 2, 3, 4)))


def test_attention_errors_name_each_violation(burn):
    q = burn.float(np.ones((1, 2, 3, 4)))
    k = burn.float(np.ones((1, 2, 5, 3)))
    v = burn.float(np.ones((1, 2, 6, 4)))
    with pytest.raises(TensorCheckError) as e:
        module.attention(q, k, v)
    msg = str(e.value)
    assert "attention" in msg and "head_dim 3" in msg and "seq_k 6" in msg
    with pytest.raises(TensorCheckError, match="rank 4"):
        module.attention(burn.float(np.ones((2, 3, 4))), k, v)
    kv = burn.float(np.ones((1, 2, 5, 4)))
    with pytest.raises(TensorCheckError, match=r"mask \[1, 2, 2, 5\]"):
        module.attention(q, kv, kv, burn.tensor(np.zeros((1, 2, 2, 5), bool), Bool))
    with pytest.raises(TensorCheckError, match="Bool"):
        module.attention(q, kv, kv, burn.float(np.zeros((1, 2, 3, 5))))
    with pytest.raises(TensorCheckError, match="scale"):
        module.attention(q, kv, kv, scale=float("nan"))
