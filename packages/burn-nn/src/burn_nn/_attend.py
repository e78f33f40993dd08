"""The attention step shared by `MultiHeadAttention` and `CrossAttention`: the fused
`burn_tensor.module.attention` op where it gives the layer's result, the composed graph where
only it can (dropout on the weights while training, `quiet_softmax`)."""

from __future__ import annotations

from burn_tensor import Tensor
from burn_tensor import activation as A
from burn_tensor import module as F

from ._util import is_training


def combine_masks(mask_pad: Tensor | None, mask_attn: Tensor | None, b: int, sq: int, sk: int):
    """One Bool mask broadcastable to [b, heads, sq, sk] from a padding mask [b, sk] and an
    attention mask [b, sq, sk] (True = masked), or None."""
    pad = None if mask_pad is None else mask_pad.reshape([b, 1, 1, sk])
    attn = None if mask_attn is None else mask_attn.reshape([b, 1, sq, sk])
    if pad is None or attn is None:
        return pad if attn is None else attn
    return pad.expand([b, 1, sq, sk]).bool_or(attn)


def attend(q, k, v, mask, scale: float, min_float: float, quiet_softmax: bool, dropout):
    """(context [b, h, sq, dv], weights()) of q [b, h, sq, d], k [b, h, sk, d], v [b, h, sk, dv]
    with `mask` (see `combine_masks`) filled with `min_float` before the softmax.

    `weights()` computes the attention weights [b, h, sq, sk] on demand (the fused path never
    holds them). The fused op leaves masked keys out (-inf) where the layers fill `min_float`:
    the same weights, except for a query whose keys are all masked, which `min_float` spreads
    uniformly over every key; such rows are set to the mean of the values, so both paths agree.
    """

    def weights():
        scores = q.matmul(k.swap_dims(2, 3)).mul_scalar(scale)
        if mask is not None:
            scores = scores.mask_fill(mask.expand(scores.dims()), min_float)
        return (A.quiet_softmax if quiet_softmax else A.softmax)(scores, 3)

    if quiet_softmax or (dropout.prob > 0.0 and is_training(q)):
        w = weights()
        return dropout.forward(w).matmul(v), lambda: w
    ctx = F.attention(q, k, v, mask, scale=scale)
    if mask is not None:
        dims = ctx.dims()
        all_masked = mask.all_dim(3).expand(dims)
        ctx = ctx.mask_where(all_masked, v.mean_dim(2).expand(dims))
    return ctx, weights
