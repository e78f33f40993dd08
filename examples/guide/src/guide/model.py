"""The guide's model: two conv layers, adaptive average pooling, dropout, two linear layers, ReLU."""

from __future__ import annotations

from burn_nn import (
    AdaptiveAvgPool2d,
    AdaptiveAvgPool2dConfig,
    Conv2d,
    Conv2dConfig,
    Dropout,
    DropoutConfig,
    Linear,
    LinearConfig,
    Module,
    Relu,
    config,
)
from burn_tensor import Tensor


class Model(Module):
    """Shapes: images `[batch, 28, 28]` -> logits `[batch, num_classes]`."""

    conv1: Conv2d
    conv2: Conv2d
    pool: AdaptiveAvgPool2d
    dropout: Dropout
    linear1: Linear
    linear2: Linear
    activation: Relu

    def forward(self, images: Tensor) -> Tensor:
        batch_size, height, width = images.dims()
        # Create a channel dim at the second position: [batch, 1, height, width].
        x = images.reshape([batch_size, 1, height, width])
        x = self.conv1.forward(x)  # [batch, 8, 26, 26]
        x = self.dropout.forward(x)
        x = self.conv2.forward(x)  # [batch, 16, 24, 24]
        x = self.dropout.forward(x)
        x = self.activation.forward(x)
        x = self.pool.forward(x)  # [batch, 16, 8, 8]
        x = x.reshape([batch_size, 16 * 8 * 8])
        x = self.linear1.forward(x)
        x = self.dropout.forward(x)
        x = self.activation.forward(x)
        return self.linear2.forward(x)  # [batch, num_classes]


@config
class ModelConfig:
    """`ModelConfig(num_classes, hidden_size)`, dropout 0.5 as in the book."""

    num_classes: int
    hidden_size: int
    dropout: float = 0.5

    def init(self, device) -> Model:
        return Model(
            conv1=Conv2dConfig([1, 8], [3, 3]).init(device),
            conv2=Conv2dConfig([8, 16], [3, 3]).init(device),
            pool=AdaptiveAvgPool2dConfig([8, 8]).init(),
            activation=Relu(),
            linear1=LinearConfig(16 * 8 * 8, self.hidden_size).init(device),
            linear2=LinearConfig(self.hidden_size, self.num_classes).init(device),
            dropout=DropoutConfig(self.dropout).init(),
        )
