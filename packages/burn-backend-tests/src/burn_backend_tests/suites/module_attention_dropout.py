"""Conformance: dropout on the attention weights inside the `attention` op (issue 36).

The op's keep mask is `burn_tensor._attention_dropout.keep_mask` of the seed words (a pure
function of seed, batch, head, row, column); the float64 reference applies that numpy mask to
the reference probabilities of `module_attention`: out = (P * keep / (1 - p)) @ V, and the
gradients of that (dV from the dropped weights, dP masked and scaled). Checked on the
primitives (forward, `attention_backward`, the flash pair) for p = 0, 0.1, 0.5 with masks,
causal and sequences past the kernels' tiles; through `module.attention`: the fraction kept is
1 - p within 3 sigma, two calls differ, `device.seed` repeats a call, bad probabilities raise.
"""

from __future__ import annotations

import numpy as np
import pytest

from burn_tensor import TensorCheckError, module
from burn_tensor.ops import attention_keep_mask as keep_mask

from .._ctx import sample
from .._prim import prim, wrap
from .module_attention import _inputs, reference
from .module_conv import assert_close_scaled

WORDS = np.array([9_876_543, 1_234_567])
# (case of module_attention, dropout probability)
DROP_CASES = [
    ("self", 0.0),
    ("self", 0.1),
    ("cross", 0.5),
    ("mask_and_causal", 0.1),
    ("full_mask_row_masked", 0.5),
    ("long_queries_causal", 0.1),
]


def dropout_reference(q, k, v, m, causal, s, p, g):
    """(out, dq, dk, dv) in float64 with the op's keep mask of `WORDS`."""
    _, probs = reference(q, k, v, m, causal, s)
    z = keep_mask(WORDS, p, *probs.shape) / (1.0 - p)
    out = (probs * z) @ v
    dv = (probs * z).swapaxes(2, 3) @ g
    dp = (g @ v.swapaxes(2, 3)) * z
    ds = probs * (dp - (probs * dp).sum(axis=3, keepdims=True)) * s
    return out, ds @ k, ds.swapaxes(2, 3) @ q, dv


def _setup(burn, cid, p):
    (_, _, _, m_t), (q, k, v, m), causal, _, s = _inputs(burn, cid)
    b, h, sq, _ = q.shape
    g = burn.ref(sample((b, h, sq, v.shape[3]), "unit", 5))
    want = dropout_reference(q, k, v, m, causal, s, p, g)
    mp = None if m_t is None else m_t.into_primitive()
    seed = burn.int(WORDS).into_primitive()
    args = (prim(burn, q), prim(burn, k), prim(burn, v), mp)
    return args, prim(burn, g), causal, s, seed, want


@pytest.mark.parametrize("cid,p", DROP_CASES)
def test_attention_dropout_primitives(burn, cid, p):
    (qp, kp, vp, mp), gp, causal, s, seed, want = _setup(burn, cid, p)
    be = burn.backend
    assert_close_scaled(burn, wrap(burn, be.attention(qp, kp, vp, mp, causal, s, p, seed)), want[0])
    grads = be.attention_backward(qp, kp, vp, mp, gp, causal, s, p, seed)
    for got, w in zip(grads, want[1:]):
        assert_close_scaled(burn, wrap(burn, got), w)


@pytest.mark.parametrize("cid,p", [("self", 0.5), ("mask_and_causal", 0.1)])
def test_attention_dropout_flash_pair(burn, cid, p):
    # the forward with its saved statistic, and the backward from them, regenerate one mask
    (qp, kp, vp, mp), gp, causal, s, seed, want = _setup(burn, cid, p)
    be = burn.backend
    out, lse = be.attention_with_lse(qp, kp, vp, mp, causal, s, p, seed)
    assert_close_scaled(burn, wrap(burn, out), want[0])
    grads = be.attention_lse_backward(qp, kp, vp, out, lse, mp, gp, causal, s, p, seed)
    for got, w in zip(grads, want[1:]):
        assert_close_scaled(burn, wrap(burn, got), w)


def test_attention_dropout_keeps_one_minus_p_and_draws_per_call(burn):
    # v = identity columns per key: out[..., i, j] = kept weight of (i, j) / (1 - p), so the
    # nonzero count is the kept count (uniform weights: q = 0)
    p, b, h, s = 0.3, 2, 2, 64
    q = burn.float(np.zeros((b, h, s, 4)))
    k = burn.float(np.zeros((b, h, s, 4)))
    v = burn.float(np.broadcast_to(np.eye(s), (b, h, s, s)).copy())
    burn.device.seed(5)
    first = module.attention(q, k, v, dropout=p).numpy()
    second = module.attention(q, k, v, dropout=p).numpy()
    burn.device.seed(5)
    again = module.attention(q, k, v, dropout=p).numpy()
    n = first.size
    kept = np.count_nonzero(first) / n
    assert abs(kept - (1 - p)) <= 3 * np.sqrt(p * (1 - p) / n), kept
    np.testing.assert_allclose(first[first != 0], 1.0 / s / (1 - p), rtol=1e-2)
    assert (first != 0).tolist() != (second != 0).tolist()  # a new seed per call
    np.testing.assert_array_equal(first, again)  # device.seed repeats it


def test_attention_dropout_errors(burn):
    q = burn.float(np.ones((1, 2, 3, 4)))
    for bad in (1.0, -0.1, float("nan"), True, "0.1"):
        with pytest.raises(TensorCheckError, match="dropout must be a probability"):
            module.attention(q, q, q, dropout=bad)
