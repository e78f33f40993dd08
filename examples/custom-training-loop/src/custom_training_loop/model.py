"""A small MLP classifier: flatten, Linear, ReLU, Dropout, Linear."""

from __future__ import annotations

from burn_nn import Dropout, DropoutConfig, Linear, LinearConfig, Module, Relu, config
from burn_tensor import Tensor


class Model(Module):
    """Shapes: images `[batch, height, width]` -> logits `[batch, num_classes]`.

    Dropout makes `model.valid()` matter: on the inner backend it is switched off.
    """

    linear1: Linear
    linear2: Linear
    dropout: Dropout
    activation: Relu

    def forward(self, images: Tensor) -> Tensor:
        x = images.flatten(1, 2)  # [batch, height * width]
        x = self.activation.forward(self.linear1.forward(x))
        x = self.dropout.forward(x)
        return self.linear2.forward(x)


@config
class ModelConfig:
    """`ModelConfig(num_classes, hidden_size)`; 28x28 inputs by default."""

    num_classes: int
    hidden_size: int
    input_size: int = 28 * 28
    dropout: float = 0.2

    def init(self, device) -> Model:
        return Model(
            linear1=LinearConfig(self.input_size, self.hidden_size).init(device),
            linear2=LinearConfig(self.hidden_size, self.num_classes).init(device),
            dropout=DropoutConfig(self.dropout).init(),
            activation=Relu(),
        )
