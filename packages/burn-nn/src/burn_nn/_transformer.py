"""`TransformerEncoder`, `PositionWiseFeedForward` and the parts the decoder shares (Burn's
`nn::transformer`; `TransformerDecoder` is in `_transformer_decoder`)."""

from __future__ import annotations

from dataclasses import dataclass

from burn_tensor import Tensor

from ._activation import Gelu
from ._attention import MhaInput, MultiHeadAttention, MultiHeadAttentionConfig
from ._static_cache import TransformerStaticCache, encoder_layer_static, new_cache, run_static
from ._transformer_cache import TransformerEncoderAutoregressiveCache
from ._config import config
from ._dropout import Dropout
from ._initializer import Initializer, KaimingUniform
from ._linear import Linear, LinearConfig
from ._module import Module
from ._norm import LayerNorm, LayerNormConfig
from ._util import check_sizes


@config
class PositionWiseFeedForwardConfig:
    """Config of `PositionWiseFeedForward`."""

    d_model: int
    d_ff: int
    dropout: float = 0.1
    initializer: Initializer = KaimingUniform()

    def init(self, device=None) -> PositionWiseFeedForward:
        check_sizes("PositionWiseFeedForwardConfig", d_model=self.d_model, d_ff=self.d_ff)
        return PositionWiseFeedForward(
            linear_inner=LinearConfig(self.d_model, self.d_ff, initializer=self.initializer).init(
                device
            ),
            linear_outer=LinearConfig(self.d_ff, self.d_model, initializer=self.initializer).init(
                device
            ),
            dropout=Dropout(prob=self.dropout),
            gelu=Gelu(),
        )


class PositionWiseFeedForward(Module):
    """`linear_outer(dropout(gelu(linear_inner(x))))`. Shapes: `[..., d_model]` -> same."""

    linear_inner: Linear
    linear_outer: Linear
    dropout: Dropout
    gelu: Gelu

    def forward(self, x: Tensor) -> Tensor:
        return self.linear_outer.forward(
            self.dropout.forward(self.gelu.forward(self.linear_inner.forward(x)))
        )


@dataclass
class TransformerEncoderInput:
    """`tensor [batch, seq, d_model]` with optional `mask_pad` / `mask_attn` (see `MhaInput`)."""

    tensor: Tensor
    mask_pad_: Tensor | None = None
    mask_attn_: Tensor | None = None

    @classmethod
    def new(cls, tensor: Tensor) -> TransformerEncoderInput:
        return cls(tensor)

    def mask_pad(self, mask: Tensor) -> TransformerEncoderInput:
        return TransformerEncoderInput(self.tensor, mask, self.mask_attn_)

    def mask_attn(self, mask: Tensor) -> TransformerEncoderInput:
        return TransformerEncoderInput(self.tensor, self.mask_pad_, mask)


def _mha_input(q, kv, mask_pad, mask_attn) -> MhaInput:
    return MhaInput(q, kv, kv, mask_pad, mask_attn)


def _block_parts(cfg, device):
    check_sizes(
        type(cfg).__name__,
        d_model=cfg.d_model,
        d_ff=cfg.d_ff,
        n_heads=cfg.n_heads,
        n_layers=cfg.n_layers,
    )
    if cfg.d_model % cfg.n_heads:
        raise ValueError(
            f"{type(cfg).__name__}: d_model={cfg.d_model} is not divisible by n_heads={cfg.n_heads}"
        )
    mha = MultiHeadAttentionConfig(
        cfg.d_model,
        cfg.n_heads,
        dropout=cfg.dropout,
        quiet_softmax=cfg.quiet_softmax,
        initializer=cfg.initializer,
    )
    pwff = PositionWiseFeedForwardConfig(
        cfg.d_model, cfg.d_ff, dropout=cfg.dropout, initializer=cfg.initializer
    )
    norm = LayerNormConfig(cfg.d_model, epsilon=cfg.layer_norm_eps)
    return mha, pwff, norm


@config
class TransformerEncoderConfig:
    """Config of `TransformerEncoder`."""

    d_model: int
    d_ff: int
    n_heads: int
    n_layers: int
    dropout: float = 0.1
    norm_first: bool = False
    quiet_softmax: bool = False
    initializer: Initializer = KaimingUniform()
    layer_norm_eps: float = 1e-5

    def init(self, device=None) -> TransformerEncoder:
        mha, pwff, norm = _block_parts(self, device)
        layers = [
            TransformerEncoderLayer(
                mha=mha.init(device),
                pwff=pwff.init(device),
                norm_1=norm.init(device),
                norm_2=norm.init(device),
                dropout=Dropout(prob=self.dropout),
                norm_first=self.norm_first,
            )
            for _ in range(self.n_layers)
        ]
        return TransformerEncoder(layers=layers)


class TransformerEncoderLayer(Module):
    """Self-attention + feed-forward with residuals; post-norm unless `norm_first`."""

    mha: MultiHeadAttention
    pwff: PositionWiseFeedForward
    norm_1: LayerNorm
    norm_2: LayerNorm
    dropout: Dropout
    norm_first: bool = False

    def forward(self, x: Tensor, mask_pad=None, mask_attn=None) -> Tensor:
        return self._run(
            x, lambda h: self.mha.forward(_mha_input(h, h, mask_pad, mask_attn)).context
        )

    def forward_rows(self, x: Tensor, mask_pad, mask_attn, cache) -> Tensor:
        """`forward` on the new positions x [b, new, d_model] of an autoregressive step;
        mask_attn holds the new rows [b, new, seq] (see `MultiHeadAttention.forward_rows`)."""
        return self._run(
            x, lambda h: self.mha.forward_rows(h, h, h, mask_pad, mask_attn, cache.mha).context
        )

    def _run(self, x: Tensor, attn) -> Tensor:
        if self.norm_first:
            x = x.add(self.dropout.forward(attn(self.norm_1.forward(x))))
            return x.add(self.dropout.forward(self.pwff.forward(self.norm_2.forward(x))))
        x = self.norm_1.forward(x.add(self.dropout.forward(attn(x))))
        return self.norm_2.forward(x.add(self.dropout.forward(self.pwff.forward(x))))


class TransformerEncoder(Module):
    """A stack of `TransformerEncoderLayer`s. Shapes: `[batch, seq, d_model]` -> same.

    Example:
        >>> from burn_ndarray import NdArray
        >>> d = NdArray().device()
        >>> enc = TransformerEncoderConfig(8, 16, 2, 2).init(d)
        >>> enc.forward(TransformerEncoderInput.new(Tensor.ones([1, 3, 8], d))).dims()
        [1, 3, 8]
    """

    layers: list

    def forward(self, input: TransformerEncoderInput) -> Tensor:
        x = input.tensor
        for layer in self.layers:
            x = layer.forward(x, input.mask_pad_, input.mask_attn_)
        return x

    def new_autoregressive_cache(self) -> TransformerEncoderAutoregressiveCache:
        """An empty cache for `forward_autoregressive_inference`, one entry per layer."""
        return TransformerEncoderAutoregressiveCache.empty(len(self.layers))

    def forward_autoregressive_inference(
        self, input: TransformerEncoderInput, cache: TransformerEncoderAutoregressiveCache
    ) -> Tensor:
        """`forward` for a sequence that grows one step at a time: `input` holds the whole
        sequence so far (and its masks, e.g. `generate_autoregressive_mask`); only the new
        positions run through the layers, attending to the keys and values every layer kept
        in `cache`. Returns the whole sequence's output [b, seq, d_model], equal to `forward`'s
        under a causal mask. A shorter sequence than the cached one starts over."""
        return cache.step(
            input.tensor,
            input.mask_attn_,
            lambda x, attn_rows: _rows_through(
                self.layers, cache.layers, x, lambda layer, y, c: layer.forward_rows(
                    y, input.mask_pad_, attn_rows, c
                ),
            ),
        )  # fmt: skip

    def new_static_cache(self, batch_size: int, max_len: int, device=None) -> TransformerStaticCache:
        """A cache of fixed size for `forward_static_cache`: keys and values [batch_size,
        heads, max_len, d_k] per layer, zeroed (HF's `StaticCache`, gpt-fast's `setup_caches`)."""
        return new_cache(self.layers, lambda layer: layer.mha, batch_size, max_len, device)

    def forward_static_cache(self, input: TransformerEncoderInput, cache: TransformerStaticCache,
                             position) -> tuple[Tensor, TransformerStaticCache]:  # fmt: skip
        """Causal `forward` of the NEW positions `input.tensor` [b, n, d_model] only, the first
        at `position` (an Int tensor [1], read on the device only, so a step is capturable; or an
        int, checked against max_len), attending to every earlier position kept in `cache`.
        Returns (output [b, n, d_model], the cache with the new keys and values): the cache is a
        value, as modules are. `input.mask_pad_` is [b, max_len]; no `mask_attn` (the cache
        makes the causal one). Equal to `forward` under `generate_autoregressive_mask` for the
        same positions (up to rounding: the softmax runs over max_len keys, masked ones left out).
        See `TransformerStaticCache`."""
        return run_static(
            "TransformerEncoder.forward_static_cache", self.layers, lambda layer: layer.mha,
            input.tensor, cache, position, input.mask_pad_, input.mask_attn_, encoder_layer_static,
        )  # fmt: skip


def _rows_through(layers, caches, x, call):
    for layer, c in zip(layers, caches):
        x = call(layer, x, c)
    return x
