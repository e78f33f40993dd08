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

__all__ = [
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
