"""`MultiHeadAttention` with padding/attention masks and an autoregressive inference cache
(Burn's `nn::attention`). The attention itself is the fused `burn_tensor.module.attention` op
(`_attend`); the cache is in `_attention_cache`."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from burn_tensor import Tensor

from ._attend import attend, combine_masks
from ._attention_cache import MhaCache, append
from ._config import config
from ._dropout import Dropout
from ._initializer import Initializer, KaimingUniform
from ._linear import Linear, LinearConfig
from ._module import Module
from ._util import check_initializer, check_sizes


@dataclass
class MhaInput:
    """Query `[batch, seq_q, d_model]`, key/value `[batch, seq_k, d_model]`; `mask_pad` Bool
    `[batch, seq_k]` (True = padding), `mask_attn` Bool `[batch, seq_q, seq_k]` (True = masked)."""

    query: Tensor
    key: Tensor
    value: Tensor
    mask_pad_: Tensor | None = None
    mask_attn_: Tensor | None = None

    @classmethod
    def self_attn(cls, tensor: Tensor) -> MhaInput:
        return cls(tensor, tensor, tensor)

    @classmethod
    def new(cls, query: Tensor, key: Tensor, value: Tensor) -> MhaInput:
        return cls(query, key, value)

    def mask_pad(self, mask: Tensor) -> MhaInput:
        return MhaInput(self.query, self.key, self.value, mask, self.mask_attn_)

    def mask_attn(self, mask: Tensor) -> MhaInput:
        return MhaInput(self.query, self.key, self.value, self.mask_pad_, mask)


class MhaOutput:
    """`context [batch, seq_q, d_model]` and attention `weights [batch, n_heads, seq_q, seq_k]`.

    The layers run the fused attention op, which never holds the weights: `weights` computes
    them on first access (and keeps them), so a model that only reads `context` never pays for
    the [seq_q, seq_k] matrix.
    """

    __slots__ = ("_weights", "_weights_fn", "context")

    def __init__(self, context: Tensor, weights: Tensor | None = None, *, weights_fn=None):
        if weights is None and weights_fn is None:
            raise ValueError("MhaOutput: give weights or weights_fn")
        self.context = context
        self._weights = weights
        self._weights_fn = weights_fn

    @property
    def weights(self) -> Tensor:
        if self._weights is None:
            self._weights = self._weights_fn()
            self._weights_fn = None
        return self._weights

    def __repr__(self) -> str:
        return f"MhaOutput(context={self.context.dims()})"


def generate_autoregressive_mask(batch_size: int, seq_length: int, device=None) -> Tensor:
    """Bool `[batch, seq, seq]`, True above the diagonal (future positions masked)."""
    mask = np.triu(np.ones((seq_length, seq_length), dtype=bool), 1)
    return Tensor.from_bool(
        np.broadcast_to(mask, (batch_size, seq_length, seq_length)).copy(), device
    )


def generate_padding_mask(
    pad_token: int, tokens_list: list[list[int]], max_seq_length: int | None, device=None
) -> tuple[Tensor, Tensor]:
    """Pad token lists to one length: `(tokens Int [batch, seq], mask_pad Bool [batch, seq])`."""
    length = max(len(t) for t in tokens_list)
    if max_seq_length is not None:
        length = min(length, max_seq_length)
    toks = np.full((len(tokens_list), length), pad_token, dtype=np.int64)
    for i, t in enumerate(tokens_list):
        t = t[:length]
        toks[i, : len(t)] = t
    return Tensor.from_ints(toks, device), Tensor.from_bool(toks == pad_token, device)


@config
class MultiHeadAttentionConfig:
    """Config of `MultiHeadAttention` (`d_model` divisible by `n_heads`)."""

    d_model: int
    n_heads: int
    dropout: float = 0.1
    min_float: float = -1.0e4
    quiet_softmax: bool = False
    initializer: Initializer = KaimingUniform()

    def init(self, device=None) -> MultiHeadAttention:
        check_sizes("MultiHeadAttentionConfig", d_model=self.d_model, n_heads=self.n_heads)
        check_initializer("MultiHeadAttentionConfig", self.initializer)
        if self.d_model % self.n_heads:
            raise ValueError(
                f"MultiHeadAttentionConfig: d_model={self.d_model} is not divisible by "
                f"n_heads={self.n_heads}"
            )

        def lin():
            return LinearConfig(self.d_model, self.d_model, initializer=self.initializer).init(
                device
            )

        return MultiHeadAttention(
            query=lin(),
            key=lin(),
            value=lin(),
            output=lin(),
            dropout=Dropout(prob=self.dropout),
            n_heads=self.n_heads,
            d_k=self.d_model // self.n_heads,
            min_float=self.min_float,
            quiet_softmax=self.quiet_softmax,
        )


class MultiHeadAttention(Module):
    """Scaled dot-product attention over `n_heads` heads ("Attention Is All You Need").

    Shapes: see `MhaInput` / `MhaOutput`.

    Example:
        >>> from burn_ndarray import NdArray
        >>> d = NdArray().device()
        >>> mha = MultiHeadAttentionConfig(8, 2).init(d)
        >>> mha.forward(MhaInput.self_attn(Tensor.ones([1, 3, 8], d))).weights.dims()
        [1, 2, 3, 3]
    """

    query: Linear
    key: Linear
    value: Linear
    output: Linear
    dropout: Dropout
    n_heads: int = 1
    d_k: int = 1
    min_float: float = -1.0e4
    quiet_softmax: bool = False

    def _heads(self, x: Tensor) -> Tensor:
        b, s, _ = x.dims()
        return x.reshape([b, s, self.n_heads, self.d_k]).swap_dims(1, 2)

    def forward(self, input: MhaInput) -> MhaOutput:
        self._check_inputs(input)
        q = self._heads(self.query.forward(input.query))
        k = self._heads(self.key.forward(input.key))
        v = self._heads(self.value.forward(input.value))
        return self._attend(q, k, v, input.mask_pad_, input.mask_attn_)

    def forward_cache(self, input: MhaInput, cache: MhaCache) -> MhaOutput:
        """As `forward`, for autoregressive inference: `input` holds the whole sequence so far
        (and its masks), `cache` the previous step's; only the new positions are projected and
        attend (to every key), the earlier outputs come from the cache. The result is the whole
        sequence's, equal to `forward`'s when position i never attends past i (a causal mask).
        """
        self._check_inputs(input)
        seq = input.query.dims()[1]
        if seq < cache.rows:
            cache.reset()
        done = cache.rows
        if seq > done:
            key, value = input.key, input.value
            if not cache.cross:
                seen = cache.keys_seen()
                key = key.narrow(1, seen, key.dims()[1] - seen)
                value = value.narrow(1, seen, value.dims()[1] - seen)
            mask_attn = input.mask_attn_
            if mask_attn is not None:
                mask_attn = mask_attn.narrow(1, done, seq - done)
            rows = input.query.narrow(1, done, seq - done)
            out = self.forward_rows(rows, key, value, input.mask_pad_, mask_attn, cache)
            cache.output = append(cache.output, out.context, 1)
        return MhaOutput(cache.output, weights_fn=lambda: self._cached_weights(input, cache))

    def forward_rows(self, query, key, value, mask_pad, mask_attn, cache: MhaCache) -> MhaOutput:
        """One autoregressive step on new positions only (what the transformers' caches call).

        Shapes: query [b, new, d_model] (the new positions), key/value [b, new_k, d_model] (the
        new key positions; for a cross-attention cache the whole memory, used on the first step
        only), mask_pad Bool [b, seq_k] (every key), mask_attn Bool [b, new, seq_k] (the new
        rows) -> context [b, new, d_model].
        """
        q = self._heads(self.query.forward(query))
        if cache.cross and cache.key is not None:
            k, v = cache.key, cache.value
        else:
            old_k, old_v = (None, None) if cache.cross else (cache.key, cache.value)
            k = append(old_k, self._heads(self.key.forward(key)), 2)
            v = append(old_v, self._heads(self.value.forward(value)), 2)
            cache.key, cache.value = k, v
        cache.query = append(cache.query, q, 2)
        cache.rows += query.dims()[1]
        return self._attend(q, k, v, mask_pad, mask_attn)

    def _cached_weights(self, input: MhaInput, cache: MhaCache) -> Tensor:
        """Weights [b, heads, rows, seq_k] of every cached position (computed on demand)."""
        b = cache.query.dims()[0]
        mask = combine_masks(
            input.mask_pad_, input.mask_attn_, b, cache.rows, cache.keys_seen()
        )
        return attend(
            cache.query, cache.key, cache.value, mask, self._scale(), self.min_float,
            self.quiet_softmax, self.dropout,
        )[1]()  # fmt: skip

    def _check_inputs(self, input: MhaInput) -> None:
        d_model = self.n_heads * self.d_k
        for name in ("query", "key", "value"):
            dims = getattr(input, name).dims()
            if len(dims) != 3 or dims[-1] != d_model:
                raise ValueError(
                    f"MultiHeadAttention: {name} must be [batch, seq, d_model={d_model}] "
                    f"({self.n_heads} heads x d_k={self.d_k}), got {dims}"
                )

    def _scale(self) -> float:
        return 1.0 / math.sqrt(self.d_k)

    def _attend(self, q: Tensor, k: Tensor, v: Tensor, mask_pad, mask_attn) -> MhaOutput:
        b, h, sq, _ = q.dims()
        mask = combine_masks(mask_pad, mask_attn, b, sq, k.dims()[2])
        ctx, weights = attend(
            q, k, v, mask, self._scale(), self.min_float, self.quiet_softmax, self.dropout
        )
        context = ctx.swap_dims(1, 2).reshape([b, sq, h * self.d_k])
        return MhaOutput(self.output.forward(context), weights_fn=weights)
