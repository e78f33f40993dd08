"""`MhaCache`: what autoregressive inference keeps between steps of `MultiHeadAttention`.

Each step sees the whole sequence so far (Burn's contract) but computes only its new
positions: the keys and values of earlier positions are kept already projected and split into
heads, the new queries attend to all of them through the fused attention op (its causal
boundary sits at the bottom-right corner, which is where new queries meet cached keys), and the
outputs of earlier positions are kept. A step therefore costs O(new x seq), not O(seq^2).
"""

from __future__ import annotations

from dataclasses import dataclass

from burn_tensor import Tensor


def append(old: Tensor | None, new: Tensor, dim: int) -> Tensor:
    """`new` after `old` along `dim` (`new` alone when nothing is cached)."""
    return new if old is None else Tensor.cat([old, new], dim)


@dataclass
class MhaCache:
    """Autoregressive cache of `MultiHeadAttention.forward_cache` (Burn's `MhaCache`).

    `MhaCache.autoregressive()` for self-attention (keys and values grow with the sequence),
    `MhaCache.autoregressive_cross_attention()` for attention over a fixed memory (its keys and
    values are projected once, on the first step). A step whose sequence is shorter than the
    cached one starts a new sequence (the cache is emptied first).

    Fields: `key`, `value` [batch, heads, seq_k, d_k]; `query` [batch, heads, rows, d_k] (for
    `MhaOutput.weights` only); `output` [batch, rows, d_model]; `rows` positions done.
    """

    cross: bool = False
    key: Tensor | None = None
    value: Tensor | None = None
    query: Tensor | None = None
    output: Tensor | None = None
    rows: int = 0

    @classmethod
    def autoregressive(cls) -> MhaCache:
        return cls()

    @classmethod
    def autoregressive_cross_attention(cls) -> MhaCache:
        return cls(cross=True)

    def reset(self) -> None:
        self.key = self.value = self.query = self.output = None
        self.rows = 0

    def keys_seen(self) -> int:
        return 0 if self.key is None else self.key.dims()[2]
