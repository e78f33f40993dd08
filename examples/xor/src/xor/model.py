"""The tutorial's XOR model: an MLP with two hidden ReLU layers (fc1, fc2) and an output layer."""

from __future__ import annotations

from burn_nn import Linear, LinearConfig, Module, Relu, config
from burn_tensor import Tensor


class XorModel(Module):
    """Shapes: inputs `[batch, input]` -> logits `[batch, output]`."""

    fc1: Linear
    fc2: Linear
    fc3: Linear
    relu: Relu

    def forward(self, x: Tensor) -> Tensor:
        x = self.relu.forward(self.fc1.forward(x))
        x = self.relu.forward(self.fc2.forward(x))
        return self.fc3.forward(x)


@config
class XorModelConfig:
    """Sizes as in the tutorial: 2 inputs, 16 hidden units, 2 classes."""

    input: int = 2
    hidden: int = 16
    output: int = 2

    def init(self, device) -> XorModel:
        return XorModel(
            fc1=LinearConfig(self.input, self.hidden).init(device),
            fc2=LinearConfig(self.hidden, self.hidden).init(device),
            fc3=LinearConfig(self.hidden, self.output).init(device),
            relu=Relu(),
        )
