"""`TransformerDecoder` (Burn's `nn::transformer::TransformerDecoder`): self-attention over the
target, cross-attention over an encoder's memory, a feed-forward; Burn's autoregressive cache and
the static cache (`forward_static_cache`)."""

from __future__ import annotations

from dataclasses import dataclass

from burn_tensor import Tensor

from ._attention import MultiHeadAttention
from ._config import config
from ._dropout import Dropout
from ._initializer import Initializer, KaimingUniform
from ._module import Module
from ._norm import LayerNorm
from ._static_cache import TransformerStaticCache, decoder_layer_static, new_cache, run_static
from ._transformer import PositionWiseFeedForward, _block_parts, _mha_input, _rows_through
from ._transformer_cache import TransformerDecoderAutoregressiveCache


@dataclass
class TransformerDecoderInput:
    """`target [batch, seq_t, d_model]`, `memory [batch, seq_m, d_model]` and optional masks."""

    target: Tensor
    memory: Tensor
    target_mask_pad_: Tensor | None = None
    target_mask_attn_: Tensor | None = None
    memory_mask_pad_: Tensor | None = None
    memory_mask_attn_: Tensor | None = None

    @classmethod
    def new(cls, target: Tensor, memory: Tensor) -> TransformerDecoderInput:
        return cls(target, memory)

    def _with(self, **kw) -> TransformerDecoderInput:
        values = dict(vars(self))
        values.update(kw)
        return TransformerDecoderInput(**values)

    def target_mask_pad(self, m):
        return self._with(target_mask_pad_=m)

    def target_mask_attn(self, m):
        return self._with(target_mask_attn_=m)

    def memory_mask_pad(self, m):
        return self._with(memory_mask_pad_=m)

    def memory_mask_attn(self, m):
        return self._with(memory_mask_attn_=m)


@config
class TransformerDecoderConfig:
    """Config of `TransformerDecoder` (same fields as the encoder's)."""

    d_model: int
    d_ff: int
    n_heads: int
    n_layers: int
    dropout: float = 0.1
    norm_first: bool = False
    quiet_softmax: bool = False
    initializer: Initializer = KaimingUniform()
    layer_norm_eps: float = 1e-5

    def init(self, device=None) -> TransformerDecoder:
        mha, pwff, norm = _block_parts(self, device)
        layers = [
            TransformerDecoderLayer(
                self_attn=mha.init(device),
                cross_attn=mha.init(device),
                pwff=pwff.init(device),
                norm_1=norm.init(device),
                norm_2=norm.init(device),
                norm_3=norm.init(device),
                dropout=Dropout(prob=self.dropout),
                norm_first=self.norm_first,
            )
            for _ in range(self.n_layers)
        ]
        return TransformerDecoder(layers=layers)


class TransformerDecoderLayer(Module):
    """Self-attention, cross-attention over `memory`, feed-forward; residuals and layer norms."""

    self_attn: MultiHeadAttention
    cross_attn: MultiHeadAttention
    pwff: PositionWiseFeedForward
    norm_1: LayerNorm
    norm_2: LayerNorm
    norm_3: LayerNorm
    dropout: Dropout
    norm_first: bool = False

    def forward(self, i: TransformerDecoderInput, x: Tensor) -> Tensor:
        return self._run(
            x,
            lambda h: self.self_attn.forward(
                _mha_input(h, h, i.target_mask_pad_, i.target_mask_attn_)
            ).context,
            lambda h: self.cross_attn.forward(
                _mha_input(h, i.memory, i.memory_mask_pad_, i.memory_mask_attn_)
            ).context,
        )

    def forward_rows(self, i: TransformerDecoderInput, x, target_attn, memory_attn, cache):
        """`forward` on the new target positions x [b, new, d_model] of an autoregressive
        step; target_attn / memory_attn hold the masks' new rows."""
        return self._run(
            x,
            lambda h: self.self_attn.forward_rows(
                h, h, h, i.target_mask_pad_, target_attn, cache.self_attn
            ).context,
            lambda h: self.cross_attn.forward_rows(
                h, i.memory, i.memory, i.memory_mask_pad_, memory_attn, cache.cross_attn
            ).context,
        )

    def _run(self, x: Tensor, self_part, cross_part) -> Tensor:
        drop = self.dropout.forward
        if self.norm_first:
            x = x.add(drop(self_part(self.norm_1.forward(x))))
            x = x.add(drop(cross_part(self.norm_2.forward(x))))
            return x.add(drop(self.pwff.forward(self.norm_3.forward(x))))
        x = self.norm_1.forward(x.add(drop(self_part(x))))
        x = self.norm_2.forward(x.add(drop(cross_part(x))))
        return self.norm_3.forward(x.add(drop(self.pwff.forward(x))))


class TransformerDecoder(Module):
    """A stack of `TransformerDecoderLayer`s. Shapes: target `[batch, seq_t, d_model]` -> same."""

    layers: list

    def forward(self, input: TransformerDecoderInput) -> Tensor:
        x = input.target
        for layer in self.layers:
            x = layer.forward(input, x)
        return x

    def new_autoregressive_cache(self) -> TransformerDecoderAutoregressiveCache:
        """An empty cache for `forward_autoregressive_inference`, one entry per layer."""
        return TransformerDecoderAutoregressiveCache.empty(len(self.layers))

    def forward_autoregressive_inference(
        self, input: TransformerDecoderInput, cache: TransformerDecoderAutoregressiveCache
    ) -> Tensor:
        """`forward` for a target that grows one step at a time (see the encoder's): only the
        new target positions run; each layer keeps its self-attention keys/values and projects
        the memory once. Returns the whole target's output [b, seq_t, d_model]."""
        memory_attn = input.memory_mask_attn_

        def rows(x, target_attn):
            done = cache.rows
            m = None if memory_attn is None else memory_attn.narrow(1, done, x.dims()[1])
            return _rows_through(
                self.layers, cache.layers, x,
                lambda layer, y, c: layer.forward_rows(input, y, target_attn, m, c),
            )  # fmt: skip

        return cache.step(input.target, input.target_mask_attn_, rows)

    def new_static_cache(self, batch_size: int, max_len: int, device=None) -> TransformerStaticCache:
        """A cache of fixed size for `forward_static_cache` (see the encoder's): the target's
        self-attention keys and values [batch_size, heads, max_len, d_k] per layer, zeroed."""
        return new_cache(self.layers, lambda layer: layer.self_attn, batch_size, max_len, device)

    def forward_static_cache(self, input: TransformerDecoderInput, cache: TransformerStaticCache,
                             position) -> tuple[Tensor, TransformerStaticCache]:  # fmt: skip
        """The encoder's `forward_static_cache` for the NEW target positions `input.target`
        [b, n, d_model] (first at `position`) over `input.memory` [b, seq_m, d_model]: returns
        (output [b, n, d_model], the updated cache). Cross-attention projects the memory at each
        call (the same shapes every token, so still capturable; its keys and values are not
        kept). `target_mask_pad_` is [b, max_len]; `memory_mask_pad_` applies as in `forward`;
        no `target_mask_attn_` / `memory_mask_attn_` (rows that depend on the position)."""
        if input.memory_mask_attn_ is not None:
            raise ValueError("TransformerDecoder.forward_static_cache: no memory_mask_attn (its "
                             "rows depend on the position); use memory_mask_pad")  # fmt: skip
        return run_static(
            "TransformerDecoder.forward_static_cache", self.layers, lambda layer: layer.self_attn,
            input.target, cache, position, input.target_mask_pad_, input.target_mask_attn_,
            lambda layer, x, k, v, step: decoder_layer_static(layer, input, x, k, v, step),
        )  # fmt: skip
