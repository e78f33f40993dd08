"""The classifier: token + position embeddings, a `TransformerEncoder` with a padding mask,
the mean of the non-padding positions, a linear head."""

from __future__ import annotations

from burn_nn import Embedding, EmbeddingConfig, Linear, LinearConfig, Module, config
from burn_nn.transformer import (
    TransformerEncoder,
    TransformerEncoderConfig,
    TransformerEncoderInput,
)
from burn_tensor import Tensor


@config
class TextClassifierConfig:
    vocab_size: int
    n_classes: int
    max_seq_len: int = 64
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int = 128
    dropout: float = 0.0

    def init(self, device=None) -> TextClassifier:
        return TextClassifier(
            tokens=EmbeddingConfig(self.vocab_size, self.d_model).init(device),
            positions=EmbeddingConfig(self.max_seq_len, self.d_model).init(device),
            encoder=TransformerEncoderConfig(
                self.d_model, self.d_ff, self.n_heads, self.n_layers,
                dropout=self.dropout, norm_first=True,
            ).init(device),  # fmt: skip
            head=LinearConfig(self.d_model, self.n_classes).init(device),
        )


class TextClassifier(Module):
    """tokens Int [batch, seq], mask_pad Bool [batch, seq] (True = padding) -> logits
    [batch, n_classes]."""

    tokens: Embedding
    positions: Embedding
    encoder: TransformerEncoder
    head: Linear

    def forward(self, tokens: Tensor, mask_pad: Tensor) -> Tensor:
        b, s = tokens.dims()
        pos = Tensor.arange(0, s, tokens.device).reshape([1, s]).expand([b, s])
        x = self.tokens.forward(tokens).add(self.positions.forward(pos))
        h = self.encoder.forward(TransformerEncoderInput.new(x).mask_pad(mask_pad))
        keep = mask_pad.bool_not().float().reshape([b, s, 1])
        pooled = h.mul(keep).sum_dim(1).div(keep.sum_dim(1).clamp_min(1.0))  # [b, 1, d]
        return self.head.forward(pooled.reshape([b, -1]))
