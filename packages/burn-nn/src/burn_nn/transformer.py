"""`burn_nn.transformer`: Burn's `burn::nn::transformer` path."""

from ._transformer import (
    PositionWiseFeedForward,
    PositionWiseFeedForwardConfig,
    TransformerDecoder,
    TransformerDecoderConfig,
    TransformerDecoderInput,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderConfig,
    TransformerEncoderInput,
    TransformerEncoderLayer,
)
from ._transformer_cache import (
    TransformerDecoderAutoregressiveCache,
    TransformerEncoderAutoregressiveCache,
)

__all__ = [
    "TransformerDecoderAutoregressiveCache",
    "TransformerEncoderAutoregressiveCache",
    "PositionWiseFeedForward",
    "PositionWiseFeedForwardConfig",
    "TransformerDecoder",
    "TransformerDecoderConfig",
    "TransformerDecoderInput",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderConfig",
    "TransformerEncoderInput",
    "TransformerEncoderLayer",
]
