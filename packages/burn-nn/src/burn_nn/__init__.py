"""burn_nn: Config, Module, Param, initializers, layers and losses (Burn's `burn::nn` + `burn::module`).

Example:
    >>> from burn_ndarray import NdArray
    >>> from burn_tensor import Tensor
    >>> from burn_nn import LinearConfig
    >>> device = NdArray().device()
    >>> LinearConfig(4, 2).init(device).forward(Tensor.ones([8, 4], device)).dims()
    [8, 2]
"""

from . import attention, conv, gru, interpolate, loss, lstm, module, pool, transformer
from ._activation import (
    GELU,
    GLU,
    Gelu,
    HardSigmoid,
    HardSigmoidConfig,
    HardSwish,
    LeakyRelu,
    LeakyReluConfig,
    LogSigmoid,
    Mish,
    PRelu,
    PReluConfig,
    ReLU,
    Relu,
    Relu6,
    Selu,
    Sigmoid,
    SiLU,
    Softplus,
    SoftplusConfig,
    Softsign,
    SwiGlu,
    SwiGluConfig,
    Tanh,
    Tanhshrink,
)
from ._codec import ConfigError
from ._config import Config, config, is_config
from ._conv import Conv1d, Conv1dConfig, Conv2d, Conv2dConfig
from ._conv_transpose import ConvTranspose1d, ConvTranspose1dConfig, ConvTranspose2d, ConvTranspose2dConfig
from ._dropout import Dropout, DropoutConfig, Embedding, EmbeddingConfig
from ._initializer import (
    Constant,
    Initializer,
    KaimingNormal,
    KaimingUniform,
    Normal,
    Ones,
    Orthogonal,
    Uniform,
    XavierNormal,
    XavierUniform,
    Zeros,
)
from ._linear import Linear, LinearConfig, LinearLayout
from ._loss import (
    BinaryCrossEntropyLoss,
    BinaryCrossEntropyLossConfig,
    CrossEntropyLoss,
    CrossEntropyLossConfig,
    HuberLoss,
    HuberLossConfig,
    KLDivLoss,
    KLDivLossConfig,
    MseLoss,
    MSELoss,
    Reduction,
    SmoothL1Loss,
    SmoothL1LossConfig,
)
from ._module import Module
from ._norm import (
    BatchNorm,
    BatchNormConfig,
    GroupNorm,
    GroupNormConfig,
    InstanceNorm,
    InstanceNormConfig,
    LayerNorm,
    LayerNormConfig,
    RmsNorm,
    RmsNormConfig,
)
from ._padding import PaddingConfig1d, PaddingConfig2d
from ._param import Param, ParamId, RunningState
from ._pool import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool1dConfig,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool2dConfig,
    AvgPool1d,
    AvgPool1dConfig,
    AvgPool2d,
    AvgPool2dConfig,
    MaxPool1d,
    MaxPool1dConfig,
    MaxPool2d,
    MaxPool2dConfig,
)
from ._attention import (
    MhaCache,
    MhaInput,
    MhaOutput,
    MultiHeadAttention,
    MultiHeadAttentionConfig,
    generate_autoregressive_mask,
    generate_padding_mask,
)
from ._encoding import (
    PositionalEncoding,
    PositionalEncodingConfig,
    RotaryEncoding,
    RotaryEncodingConfig,
    generate_sinusoids,
)
from ._resize import (
    Interpolate1d,
    Interpolate1dConfig,
    Interpolate2d,
    Interpolate2dConfig,
    InterpolateMode,
    Unfold4d,
    Unfold4dConfig,
)
from ._rnn import BiLstm, BiLstmConfig, GateController, Gru, GruConfig, Lstm, LstmConfig, LstmState
from ._transformer import (
    PositionWiseFeedForward,
    PositionWiseFeedForwardConfig,
    TransformerDecoder,
    TransformerDecoderConfig,
    TransformerDecoderInput,
    TransformerEncoder,
    TransformerEncoderConfig,
    TransformerEncoderInput,
)
from ._visitor import ModuleMapper, ModuleVisitor

__all__ = [
    # config, module system
    "Config", "ConfigError", "config", "is_config", "Module", "ModuleMapper", "ModuleVisitor",
    "Param", "ParamId", "RunningState", "module",
    # initializers
    "Constant", "Initializer", "KaimingNormal", "KaimingUniform", "Normal", "Ones", "Orthogonal",
    "Uniform", "XavierNormal", "XavierUniform", "Zeros",
    # layers
    "Linear", "LinearConfig", "LinearLayout", "Dropout", "DropoutConfig", "Embedding",
    "EmbeddingConfig", "PaddingConfig1d", "PaddingConfig2d",
    "conv", "Conv1d", "Conv1dConfig", "Conv2d", "Conv2dConfig", "ConvTranspose1d",
    "ConvTranspose1dConfig", "ConvTranspose2d", "ConvTranspose2dConfig",
    "pool", "AdaptiveAvgPool1d", "AdaptiveAvgPool1dConfig", "AdaptiveAvgPool2d",
    "AdaptiveAvgPool2dConfig", "AvgPool1d", "AvgPool1dConfig", "AvgPool2d", "AvgPool2dConfig",
    "MaxPool1d", "MaxPool1dConfig", "MaxPool2d", "MaxPool2dConfig",
    "BatchNorm", "BatchNormConfig", "GroupNorm", "GroupNormConfig", "InstanceNorm",
    "InstanceNormConfig", "LayerNorm", "LayerNormConfig", "RmsNorm", "RmsNormConfig",
    # activations
    "GELU", "GLU", "Gelu", "HardSigmoid", "HardSigmoidConfig", "HardSwish", "LeakyRelu",
    "LeakyReluConfig", "LogSigmoid", "Mish", "PRelu", "PReluConfig", "ReLU", "Relu", "Relu6",
    "Selu", "Sigmoid", "SiLU", "Softplus", "SoftplusConfig", "Softsign", "SwiGlu", "SwiGluConfig",
    "Tanh", "Tanhshrink",
    # losses
    "loss", "BinaryCrossEntropyLoss", "BinaryCrossEntropyLossConfig", "CrossEntropyLoss",
    "CrossEntropyLossConfig", "HuberLoss", "HuberLossConfig", "KLDivLoss", "KLDivLossConfig",
    "MSELoss", "MseLoss", "Reduction", "SmoothL1Loss", "SmoothL1LossConfig",
    # sequence models
    "attention", "gru", "lstm", "transformer", "interpolate",
    "BiLstm", "BiLstmConfig", "GateController", "Gru", "GruConfig", "Lstm", "LstmConfig", "LstmState",
    "MhaCache", "MhaInput", "MhaOutput", "MultiHeadAttention", "MultiHeadAttentionConfig",
    "generate_autoregressive_mask", "generate_padding_mask",
    "PositionWiseFeedForward", "PositionWiseFeedForwardConfig", "TransformerDecoder",
    "TransformerDecoderConfig", "TransformerDecoderInput", "TransformerEncoder",
    "TransformerEncoderConfig", "TransformerEncoderInput",
    "PositionalEncoding", "PositionalEncodingConfig", "RotaryEncoding", "RotaryEncodingConfig",
    "generate_sinusoids",
    "Interpolate1d", "Interpolate1dConfig", "Interpolate2d", "Interpolate2dConfig", "InterpolateMode",
    "Unfold4d", "Unfold4dConfig",
]
