"""`burn_nn.attention`: Burn's `burn::nn::attention` path."""

from ._cross_attention import CrossAttention, CrossAttentionCache, CrossAttentionConfig
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
    "CrossAttention",
    "CrossAttentionCache",
    "CrossAttentionConfig",
    "MhaCache",
    "MhaInput",
    "MhaOutput",
    "MultiHeadAttention",
    "MultiHeadAttentionConfig",
    "generate_autoregressive_mask",
    "generate_padding_mask",
]
