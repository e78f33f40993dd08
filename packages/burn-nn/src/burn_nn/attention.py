"""`burn_nn.attention`: Burn's `burn::nn::attention` path."""

from ._attention import (
    MhaCache,
    MhaInput,
    MhaOutput,
    MultiHeadAttention,
    MultiHeadAttentionConfig,
    generate_autoregressive_mask,
    generate_padding_mask,
)

__all__ = [
    "MhaCache",
    "MhaInput",
    "MhaOutput",
    "MultiHeadAttention",
    "MultiHeadAttentionConfig",
    "generate_autoregressive_mask",
    "generate_padding_mask",
]
