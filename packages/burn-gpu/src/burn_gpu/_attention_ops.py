"""`FlashAttentionOps`: the mixin that routes a GPU backend's `attention` and its backward to the
flash kernels of `_attention.py`, and the launch arguments both runtimes pass them.

Besides `attention` / `attention_backward`, a backend with this mixin implements the two
declared ops Autodiff looks for (`burn_autodiff`'s attention rule; the contract's defaults keep
no statistic):

- `attention_with_lse(q, k, v, mask, causal, scale[, dropout, seed]) -> (out, lse)`: the
  forward and its saved row statistic (None when the call took the decomposition);
- `attention_lse_backward(q, k, v, out, lse, mask, grad, causal, scale[, dropout, seed]) ->
  (dq, dk, dv)`: the backward from that saved state (FlashAttention-2: no forward is run again).

Every op takes the optional trailing `dropout` (probability on the weights) and `seed` (the [2]
Int primitive of seed words): the kernels regenerate the keep mask (`_attention_dropout.py`).

`attention_backward` without saved state runs the forward kernel first (it needs O and lse).
Eligible calls: float32 / float64 / bfloat16 storage the runtime takes (`_attention_dtypes`),
the same dtype on Q, K, V (and the gradient), head and value dims <= 128, fewer than 2^31
work-groups and rows; anything else takes the class after the mixin (the decomposition).
`BURN_GPU_ATTENTION=0` sends every call to the decomposition (to compare the two in a bench).
"""

from __future__ import annotations

import os

from ._attention import MAX_HEAD_DIM, ROWS


class FlashAttentionOps:
    """Mixin of a GPU backend. The backend defines `_attention_dtypes(query)` (storage dtype names
    its kernels take), `_attention_fwd(q, k, v, mask, causal, scale, dropout, seed) -> (out, lse)`
    and `_attention_bwd(q, k, v, out, lse, mask, grad, causal, scale, dropout, seed) -> (dq, dk,
    dv)` over its primitives (arguments already checked eligible; `seed` the [2] Int primitive of
    seed words, or None without dropout: `_attention_dropout.py`)."""

    def attention(self, query, key, value, mask, causal, scale, dropout=0.0, seed=None):
        if not self._attention_eligible(query, key, value):
            return super().attention(query, key, value, mask, causal, scale, dropout, seed)
        return self._attention_fwd(query, key, value, mask, causal, scale, dropout, seed)[0]

    def attention_with_lse(self, query, key, value, mask, causal, scale, dropout=0.0, seed=None):
        """(output, saved statistic): the statistic is None when the decomposition ran."""
        if not self._attention_eligible(query, key, value):
            out = super().attention(query, key, value, mask, causal, scale, dropout, seed)
            return out, None
        return self._attention_fwd(query, key, value, mask, causal, scale, dropout, seed)

    def attention_backward(
        self, query, key, value, mask, output_grad, causal, scale, dropout=0.0, seed=None
    ):
        drop = (dropout, seed)
        if not self._attention_eligible(query, key, value, output_grad):
            return super().attention_backward(
                query, key, value, mask, output_grad, causal, scale, *drop
            )
        out, lse = self._attention_fwd(query, key, value, mask, causal, scale, *drop)
        return self._attention_bwd(
            query, key, value, out, lse, mask, output_grad, causal, scale, *drop
        )

    def attention_lse_backward(
        self, query, key, value, out, lse, mask, output_grad, causal, scale, dropout=0.0, seed=None
    ):
        """(dq, dk, dv) from the forward's output and saved statistic (`attention_with_lse`)."""
        drop = (dropout, seed)
        if lse is None or not self._attention_eligible(query, key, value, output_grad):
            return self.attention_backward(
                query, key, value, mask, output_grad, causal, scale, *drop
            )
        return self._attention_bwd(
            query, key, value, out, lse, mask, output_grad, causal, scale, *drop
        )

    def _attention_eligible(self, query, key, value, grad=None) -> bool:
        if os.environ.get("BURN_GPU_ATTENTION", "1") == "0":  # A/B against the decomposition
            return False
        dt = str(query.dtype)
        arrays = (query, key, value) if grad is None else (query, key, value, grad)
        if dt not in self._attention_dtypes(query) or any(str(a.dtype) != dt for a in arrays):
            return False
        b, h, sq, d = query.shape
        sk, dv = key.shape[2], value.shape[3]
        if not (1 <= d <= MAX_HEAD_DIM and 1 <= dv <= MAX_HEAD_DIM):
            return False
        groups = b * h * -(-max(sq, sk) // ROWS)
        return groups < 2**31 and b * h * max(sq, sk) < 2**31 and min(b, h, sq, sk) > 0


def view_args(shape, strides, offset: int = 0) -> tuple[int, int, int, int] | None:
    """(offset, batch, head, row) element strides of a [b, h, s, d] view for the kernels, or
    None when its last dim is not contiguous (the caller copies it). A dim of size 1 may have
    any stride: it is never stepped."""
    if shape[3] > 1 and strides[3] != 1:
        return None
    return (int(offset), int(strides[0]), int(strides[1]), int(strides[2]))


def mask_args(mask_shape, strides, offset: int = 0) -> tuple[int, ...]:
    """(offset, b, h, q, k) element strides of a Bool mask broadcast to [b, h, seq_q, seq_k]
    (0 where the mask's dim is 1); all zeros for no mask."""
    if mask_shape is None:
        return (0, 0, 0, 0, 0)
    return (int(offset),) + tuple(0 if n == 1 else int(s) for n, s in zip(mask_shape, strides))
