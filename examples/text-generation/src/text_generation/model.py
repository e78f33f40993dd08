"""The decoder-only model: token + position embeddings, a causal pre-norm `TransformerEncoder`,
a final layer norm and a linear head over the vocabulary."""

from __future__ import annotations

from burn_nn import (
    Embedding,
    EmbeddingConfig,
    LayerNorm,
    LayerNormConfig,
    Linear,
    LinearConfig,
    Module,
    config,
)
from burn_nn.attention import generate_autoregressive_mask
from burn_nn.transformer import (
    TransformerEncoder,
    TransformerEncoderConfig,
    TransformerEncoderInput,
)
from burn_tensor import Tensor


@config
class TextGenerationModelConfig:
    vocab_size: int
    max_seq_len: int = 128
    d_model: int = 96
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int = 384
    dropout: float = 0.0

    def init(self, device=None) -> TextGenerationModel:
        return TextGenerationModel(
            tokens=EmbeddingConfig(self.vocab_size, self.d_model).init(device),
            positions=EmbeddingConfig(self.max_seq_len, self.d_model).init(device),
            encoder=TransformerEncoderConfig(
                self.d_model, self.d_ff, self.n_heads, self.n_layers,
                dropout=self.dropout, norm_first=True,
            ).init(device),  # fmt: skip
            norm=LayerNormConfig(self.d_model).init(device),
            head=LinearConfig(self.d_model, self.vocab_size).init(device),
            max_seq_len=self.max_seq_len,
        )


class TextGenerationModel(Module):
    """tokens Int [batch, seq] -> logits [batch, seq, vocab]; position i sees tokens <= i."""

    tokens: Embedding
    positions: Embedding
    encoder: TransformerEncoder
    norm: LayerNorm
    head: Linear
    max_seq_len: int = 128

    def _input(self, tokens: Tensor) -> TransformerEncoderInput:
        b, s = tokens.dims()
        if s > self.max_seq_len:
            raise ValueError(f"{s} tokens: longer than max_seq_len={self.max_seq_len}")
        pos = Tensor.arange(0, s, tokens.device).reshape([1, s]).expand([b, s])
        x = self.tokens.forward(tokens).add(self.positions.forward(pos))
        return TransformerEncoderInput.new(x).mask_attn(
            generate_autoregressive_mask(b, s, tokens.device)
        )

    def forward(self, tokens: Tensor) -> Tensor:
        return self.head.forward(self.norm.forward(self.encoder.forward(self._input(tokens))))

    def next_logits(self, tokens: Tensor, cache=None) -> Tensor:
        """Logits [batch, vocab] of the token after `tokens`; with `cache` (from
        `encoder.new_autoregressive_cache()`) only the new positions run."""
        b, s = tokens.dims()
        inp = self._input(tokens)
        h = (
            self.encoder.forward(inp)
            if cache is None
            else self.encoder.forward_autoregressive_inference(inp, cache)
        )
        last = h.narrow(1, s - 1, 1)
        return self.head.forward(self.norm.forward(last)).reshape([b, -1])


def static_step(model: TextGenerationModel, tokens: Tensor, position: Tensor, cache):
    """`burn_nn.generation.generate_static`'s step: the new tokens Int [batch, n], the first at
    `position` (Int [1]), through the encoder's static cache -> (logits [batch, vocab] of the
    last one, the new cache). The position ids come from the cache's `positions` (on the
    device: no upload, so the one-token step is capturable)."""
    b, n = tokens.dims()
    ids = cache.positions.val().narrow(0, 0, n).add(position).reshape([1, n]).expand([b, n])
    x = model.tokens.forward(tokens).add(model.positions.forward(ids))
    h, cache = model.encoder.forward_static_cache(TransformerEncoderInput.new(x), cache, position)
    logits = model.head.forward(model.norm.forward(h.narrow(1, n - 1, 1)))
    return logits.reshape([b, -1]), cache


