"""`MultiHeadAttention` with padding/attention masks and an autoregressive inference cache
(Burn's `nn::attention`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from burn_tensor import Tensor
from burn_tensor import activation as A

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


@dataclass
class MhaOutput:
    """`context [batch, seq_q, d_model]` and attention `weights [batch, n_heads, seq_q, seq_k]`."""

    context: Tensor
    weights: Tensor


@dataclass
class TensorCache:
    """Projections computed on earlier autoregressive steps; only new positions are projected."""

    tensor: Tensor | None = None

    def forward_autoregressive(self, x: Tensor, fn) -> Tensor:
        seq = x.dims()[1]
        done = 0 if self.tensor is None else self.tensor.dims()[1]
        if done == 0 or done > seq:
            out = fn(x)
        else:
            out = (
                Tensor.cat([self.tensor, fn(x.narrow(1, done, seq - done))], 1)
                if seq > done
                else self.tensor
            )
        self.tensor = out
        return out


@dataclass
class MhaCache:
    """Autoregressive cache of `MultiHeadAttention.forward_cache` (`MhaCache.autoregressive()`)."""

    query: TensorCache = field(default_factory=TensorCache)
    key: TensorCache = field(default_factory=TensorCache)
    value: TensorCache = field(default_factory=TensorCache)
    output: TensorCache = field(default_factory=TensorCache)

    @classmethod
    def autoregressive(cls) -> MhaCache:
        return cls()


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
        return self._attend(q, k, v, input)

    def forward_cache(self, input: MhaInput, cache: MhaCache) -> MhaOutput:
        """As `forward`, for autoregressive decoding where inputs grow one step at a time: the
        projections of positions seen before are reused from `cache`."""
        q = self._heads(cache.query.forward_autoregressive(input.query, self.query.forward))
        k = self._heads(cache.key.forward_autoregressive(input.key, self.key.forward))
        v = self._heads(cache.value.forward_autoregressive(input.value, self.value.forward))
        return self._attend(q, k, v, input)

    def _check_inputs(self, input: MhaInput) -> None:
        d_model = self.n_heads * self.d_k
        for name in ("query", "key", "value"):
            dims = getattr(input, name).dims()
            if len(dims) != 3 or dims[-1] != d_model:
                raise ValueError(
                    f"MultiHeadAttention: {name} must be [batch, seq, d_model={d_model}] "
                    f"({self.n_heads} heads x d_k={self.d_k}), got {dims}"
                )

    def _attend(self, q: Tensor, k: Tensor, v: Tensor, input: MhaInput) -> MhaOutput:
        scores = q.matmul(k.swap_dims(2, 3)).div_scalar(math.sqrt(self.d_k))
        b, h, sq, sk = scores.dims()
        if input.mask_pad_ is not None:
            mask = input.mask_pad_.reshape([b, 1, 1, sk]).expand([b, h, sq, sk])
            scores = scores.mask_fill(mask, self.min_float)
        if input.mask_attn_ is not None:
            mask = input.mask_attn_.reshape([b, 1, sq, sk]).expand([b, h, sq, sk])
            scores = scores.mask_fill(mask, self.min_float)
        weights = (A.quiet_softmax if self.quiet_softmax else A.softmax)(scores, 3)
        context = self.dropout.forward(weights).matmul(v)
        context = context.swap_dims(1, 2).reshape([b, sq, h * self.d_k])
        return MhaOutput(self.output.forward(context), weights)
