"""Autoregressive inference caches of `TransformerEncoder` / `TransformerDecoder` (Burn's
`TransformerEncoderAutoregressiveCache`, `TransformerDecoderAutoregressiveCache`).

Each layer keeps its attention's keys and values (`MhaCache`); the stack keeps the outputs of
the positions done, so a step runs only its new positions through the layers and still returns
the whole sequence's output, as Burn's `forward_autoregressive_inference` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from burn_tensor import Tensor

from ._attention_cache import MhaCache, append


@dataclass
class TransformerEncoderLayerAutoregressiveCache:
    mha: MhaCache = field(default_factory=MhaCache.autoregressive)


@dataclass
class TransformerDecoderLayerAutoregressiveCache:
    self_attn: MhaCache = field(default_factory=MhaCache.autoregressive)
    cross_attn: MhaCache = field(default_factory=MhaCache.autoregressive_cross_attention)


@dataclass
class _StackCache:
    """Per-layer caches, the output of the positions done and how many there are."""

    layers: list
    output: Tensor | None = None
    rows: int = 0

    def reset(self) -> None:
        self.layers = [type(c)() for c in self.layers]
        self.output = None
        self.rows = 0

    def step(self, seq_input: Tensor, mask_attn: Tensor | None, run_rows) -> Tensor:
        """Run `run_rows(new positions [b, new, d], mask_attn rows [b, new, seq] | None)` on
        the positions of `seq_input` [b, seq, d] not done yet; the whole output [b, seq, d]."""
        seq = seq_input.dims()[1]
        if seq < self.rows:
            self.reset()
        new = seq - self.rows
        if new > 0:
            x = seq_input.narrow(1, self.rows, new)
            rows = None if mask_attn is None else mask_attn.narrow(1, self.rows, new)
            out = run_rows(x, rows)
            self.output = append(self.output, out, 1)
            self.rows = seq
        return self.output


class TransformerEncoderAutoregressiveCache(_StackCache):
    @classmethod
    def empty(cls, n_layers: int) -> TransformerEncoderAutoregressiveCache:
        return cls([TransformerEncoderLayerAutoregressiveCache() for _ in range(n_layers)])


class TransformerDecoderAutoregressiveCache(_StackCache):
    @classmethod
    def empty(cls, n_layers: int) -> TransformerDecoderAutoregressiveCache:
        return cls([TransformerDecoderLayerAutoregressiveCache() for _ in range(n_layers)])
