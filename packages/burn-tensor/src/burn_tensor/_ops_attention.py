"""Scaled dot-product attention (Burn's `attention` module op) and its backward primitive.

`attention(query, key, value, mask, causal, scale)` is softmax(Q Kᵗ * scale, masked) · V over
`[batch, heads, seq, dim]` primitives. Its default is the composition Burn falls back to
(matmul, mask_fill with -inf, a NaN-safe softmax, matmul), so every backend has it; a backend
overrides it with a kernel that never holds the whole [seq_q, seq_k] score matrix (NdArray's
blocked kernel, a flash-attention kernel on a GPU).

`attention_backward(query, key, value, mask, output_grad, causal, scale) -> (dq, dk, dv)`
recomputes the softmax from Q and K instead of storing it (what flash attention's backward
does): Autodiff keeps only Q, K, V (and the mask), never the [seq_q, seq_k] probabilities.

Semantics (Burn's): `mask` is a Bool primitive broadcastable to [batch, heads, seq_q, seq_k]
whose True entries are left out; `causal` leaves out key j for query i when
j > i + (seq_k - seq_q) (the causal boundary aligned at the bottom-right corner, so a query
block that continues a cached key sequence sees every earlier key); a query whose keys are all
left out gets 0 (not NaN). `scale` is a float (the Tensor layer fills in 1/sqrt(head_dim)).

Dropout on the weights (`dropout` = p in [0, 1), `seed` a [2] Int primitive of seed words, both
trailing and optional so 6-argument callers keep working): out = (P * keep / (1 - p)) @ V with
the keep mask of `_attention_dropout` (a pure function of seed, batch, head, row, column, which
the backward regenerates). The defaults read the two seed words to the host to build the mask
(a sync on a GPU backend: only calls its kernels do not take come here).
"""

from __future__ import annotations

import numpy as np

from ._attention_dropout import keep_mask
from ._data import TensorData


def causal_mask(seq_q: int, seq_k: int) -> np.ndarray:
    """Bool [seq_q, seq_k], True where key j is after query i's position:
    j > i + (seq_k - seq_q)."""
    offset = seq_k - seq_q
    return np.arange(seq_k)[None, :] > (np.arange(seq_q)[:, None] + offset)


def _finfo(dtype):
    try:
        return np.finfo(np.dtype(dtype))
    except (TypeError, ValueError):  # a dtype numpy's finfo does not know (bfloat16)
        return np.finfo(np.float16)


class AttentionOps:
    def attention(self, query, key, value, mask, causal, scale, dropout=0.0, seed=None):
        """softmax(query @ keyᵗ * scale, masked) (* keep / (1 - dropout)) @ value.

        Shapes: query [b, h, sq, d], key [b, h, sk, d], value [b, h, sk, dv], mask Bool
        broadcastable to [b, h, sq, sk] or None, seed Int [2] (with dropout > 0)
        -> [b, h, sq, dv].
        """
        probs = self._attention_probs(query, key, mask, causal, scale)
        probs = self._attention_drop(probs, dropout, seed)
        return self.float_matmul(probs, value)

    def attention_backward(
        self, query, key, value, mask, output_grad, causal, scale, dropout=0.0, seed=None
    ):
        """(dq, dk, dv) of `attention` for output_grad [b, h, sq, dv], with the probabilities
        P recomputed: dV = P̃ᵗ dO (P̃ = P * keep / (1 - p), the dropped weights),
        dP = (dO Vᵗ) * keep / (1 - p), dS = softmax_backward(P, dP) * scale, dQ = dS K,
        dK = dSᵗ Q."""
        probs = self._attention_probs(query, key, mask, causal, scale)
        dropped = self._attention_drop(probs, dropout, seed)
        dv = self.float_matmul(self.float_swap_dims(dropped, 2, 3), output_grad)
        dp = self.float_matmul(output_grad, self.float_swap_dims(value, 2, 3))
        dp = self._attention_drop(dp, dropout, seed)
        ds = self.float_mul_scalar(self.softmax_backward(probs, dp, 3), scale)
        dq = self.float_matmul(ds, key)
        dk = self.float_matmul(self.float_swap_dims(ds, 2, 3), query)
        return dq, dk, dv

    def attention_with_lse(self, query, key, value, mask, causal, scale, dropout=0.0, seed=None):
        """(output, saved row statistic) of `attention`: the statistic (the scores' log-sum-exp)
        is what a flash backward (`attention_lse_backward`) starts from. This default keeps none
        (None), as a flash kernel does when a call takes the decomposition."""
        return self.attention(query, key, value, mask, causal, scale, dropout, seed), None

    def attention_lse_backward(
        self, query, key, value, out, lse, mask, output_grad, causal, scale, dropout=0.0, seed=None
    ):
        """(dq, dk, dv) of `attention` from the forward's output and saved statistic
        (`attention_with_lse`); this default recomputes them (`attention_backward`)."""
        return self.attention_backward(
            query, key, value, mask, output_grad, causal, scale, dropout, seed
        )

    def _attention_drop(self, x, dropout, seed):
        """x [b, h, sq, sk] * keep / (1 - dropout) (x itself when dropout is 0)."""
        if not dropout:
            return x
        words = self.int_into_data(seed).numpy()
        b, h, sq, sk = x.shape
        dropped = ~keep_mask(words, float(dropout), b, h, sq, sk)
        dropped = self.bool_from_data(TensorData(dropped), self.device_of(x))
        return self.float_mul_scalar(self.float_mask_fill(x, dropped, 0.0), 1.0 / (1.0 - dropout))

    def _attention_probs(self, query, key, mask, causal, scale):
        """The attention probabilities [b, h, sq, sk], masked rows all zero."""
        scores = self.float_mul_scalar(
            self.float_matmul(query, self.float_swap_dims(key, 2, 3)), scale
        )
        shape = tuple(scores.shape)
        if mask is not None:
            full = mask if tuple(mask.shape) == shape else self.bool_expand(mask, shape)
            scores = self.float_mask_fill(scores, full, float("-inf"))
        if causal:
            tri = causal_mask(shape[2], shape[3]).reshape((1, 1) + shape[2:])
            tri = self.bool_from_data(TensorData(tri), self.device_of(query))
            scores = self.float_mask_fill(scores, self.bool_expand(tri, shape), float("-inf"))
        # NaN-safe softmax (Burn's): a row of -inf has max -inf, whose shift would be NaN, and
        # a sum of 0; clamping the max to the most negative finite value and the sum to the
        # smallest normal gives 0 for such a row.
        fi = _finfo(query.dtype)
        top = self.float_clamp_min(self.float_max_dim(scores, 3), float(fi.min))
        e = self.float_exp(self.float_sub(scores, top))
        total = self.float_clamp_min(self.float_sum_dim(e, 3), float(fi.tiny))
        return self.float_div(e, total)
