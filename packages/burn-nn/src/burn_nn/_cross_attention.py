"""`CrossAttention` (Burn's `nn::attention::CrossAttention`): queries from one sequence attend
to a context of another width, with grouped-query attention (`n_heads_kv` key/value heads shared
by `n_heads / n_heads_kv` query heads each) and a cache that projects the context once."""

from __future__ import annotations

import math
from dataclasses import dataclass

from burn_tensor import Tensor

from ._attend import attend, combine_masks
from ._config import config
from ._dropout import Dropout
from ._initializer import KaimingUniform
from ._linear import Linear, LinearConfig
from ._module import Module
from ._util import check_sizes


@config
class CrossAttentionConfig:
    """Config of `CrossAttention` (Burn's fields and defaults; `n_heads` divisible by
    `n_heads_kv`). Weights: KaimingUniform with gain 1/sqrt(d_head), as Burn."""

    d_model: int
    d_context: int
    n_heads: int
    n_heads_kv: int
    d_head: int
    dropout: float = 0.1
    min_float: float = -1.0e4
    quiet_softmax: bool = False

    def init(self, device=None) -> CrossAttention:
        check_sizes(
            "CrossAttentionConfig",
            d_model=self.d_model,
            d_context=self.d_context,
            n_heads=self.n_heads,
            n_heads_kv=self.n_heads_kv,
            d_head=self.d_head,
        )
        if self.n_heads % self.n_heads_kv:
            raise ValueError(
                f"CrossAttentionConfig: n_heads={self.n_heads} is not divisible by "
                f"n_heads_kv={self.n_heads_kv}"
            )
        init = KaimingUniform(gain=1.0 / math.sqrt(self.d_head))

        def lin(d_in, d_out):
            return LinearConfig(d_in, d_out, initializer=init).init(device)

        hq, hkv = self.n_heads * self.d_head, self.n_heads_kv * self.d_head
        return CrossAttention(
            query=lin(self.d_model, hq),
            key=lin(self.d_context, hkv),
            value=lin(self.d_context, hkv),
            output=lin(hq, self.d_model),
            dropout=Dropout(prob=self.dropout),
            n_heads=self.n_heads,
            n_heads_kv=self.n_heads_kv,
            d_head=self.d_head,
            min_float=self.min_float,
            quiet_softmax=self.quiet_softmax,
        )


@dataclass
class CrossAttentionCache:
    """The context's keys and values [batch, n_heads, seq_k, d_head], projected on the first
    `forward_cache` call and reused after (Burn's `CrossAttentionCache`)."""

    k: Tensor | None = None
    v: Tensor | None = None

    @classmethod
    def new(cls) -> CrossAttentionCache:
        return cls()


class CrossAttention(Module):
    """Multi-head (or grouped-query) attention of `query` over `context`.

    Shapes: query [batch, seq_q, d_model], context [batch, seq_k, d_context], mask Bool
    [batch, seq_k] (True = padding, left out) -> [batch, seq_q, d_model].

    Example:
        >>> from burn_ndarray import NdArray
        >>> d = NdArray().device()
        >>> ca = CrossAttentionConfig(8, 6, 4, 2, 3).init(d)
        >>> ca.forward(Tensor.ones([2, 5, 8], d), Tensor.ones([2, 7, 6], d)).dims()
        [2, 5, 8]
    """

    query: Linear
    key: Linear
    value: Linear
    output: Linear
    dropout: Dropout
    n_heads: int = 1
    n_heads_kv: int = 1
    d_head: int = 1
    min_float: float = -1.0e4
    quiet_softmax: bool = False

    def forward(self, query: Tensor, context: Tensor, mask: Tensor | None = None) -> Tensor:
        self._check(query, context, mask)
        return self._attend(query, self._kv(self.key, context), self._kv(self.value, context), mask)

    def forward_cache(
        self, query: Tensor, context: Tensor, mask: Tensor | None, cache: CrossAttentionCache
    ) -> Tensor:
        """As `forward`, the context's keys and values taken from `cache` after the first call
        (the context is fixed while a sequence is decoded)."""
        self._check(query, context, mask)
        if cache.k is None:
            cache.k, cache.v = self._kv(self.key, context), self._kv(self.value, context)
        return self._attend(query, cache.k, cache.v, mask)

    def _check(self, query, context, mask) -> None:
        q, c = query.dims(), context.dims()
        d_model, d_context = self.query.weight.dims()[0], self.key.weight.dims()[0]
        problems = []
        if len(q) != 3 or q[2] != d_model:
            problems.append(f"query must be [batch, seq_q, d_model={d_model}], got {q}")
        if len(c) != 3 or c[2] != d_context:
            problems.append(f"context must be [batch, seq_k, d_context={d_context}], got {c}")
        elif len(q) == 3 and q[0] != c[0]:
            problems.append(f"batch differs: query {q[0]}, context {c[0]}")
        if mask is not None and len(c) == 3 and mask.dims() != c[:2]:
            problems.append(f"mask must be [batch, seq_k] = {c[:2]}, got {mask.dims()}")
        if problems:
            raise ValueError("CrossAttention: " + "; ".join(problems))

    def _kv(self, linear: Linear, context: Tensor) -> Tensor:
        """Projected context as [batch, n_heads, seq_k, d_head]: each of the `n_heads_kv` heads
        repeated for its `n_heads / n_heads_kv` query heads (head i reads kv head i // rep)."""
        b, s, _ = context.dims()
        x = linear.forward(context).reshape([b, s, self.n_heads_kv, self.d_head]).swap_dims(1, 2)
        rep = self.n_heads // self.n_heads_kv
        if rep == 1:
            return x
        x = x.reshape([b, self.n_heads_kv, 1, s, self.d_head])
        return x.expand([b, self.n_heads_kv, rep, s, self.d_head]).reshape(
            [b, self.n_heads, s, self.d_head]
        )

    def _attend(self, query: Tensor, k: Tensor, v: Tensor, mask) -> Tensor:
        b, sq, _ = query.dims()
        q = self.query.forward(query).reshape([b, sq, self.n_heads, self.d_head]).swap_dims(1, 2)
        m = combine_masks(mask, None, b, sq, k.dims()[2])
        scale = 1.0 / math.sqrt(self.d_head)
        ctx, _ = attend(q, k, v, m, scale, self.min_float, self.quiet_softmax, self.dropout)
        return self.output.forward(ctx.swap_dims(1, 2).reshape([b, sq, self.n_heads * self.d_head]))
