"""`burn_nn.transformer`: Burn's `burn::nn::transformer` path."""

from ._transformer import (
    PositionWiseFeedForward,
    PositionWiseFeedForwardConfig,
    TransformerEncoder,
    TransformerEncoderConfig,
    TransformerEncoderInput,
    TransformerEncoderLayer,
)
from ._static_cache import TransformerStaticCache
from ._transformer_decoder import (
    TransformerDecoder,
    TransformerDecoderConfig,
    TransformerDecoderInput,
    TransformerDecoderLayer,
)
from ._transformer_cache import (
    TransformerDecoderAutoregressiveCache,
    TransformerEncoderAutoregressiveCache,
)

__all__ = [
    "TransformerStaticCache",
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
