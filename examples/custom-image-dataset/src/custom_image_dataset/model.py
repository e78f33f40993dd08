"""Burn's CIFAR-10 CNN (`examples/custom-image-dataset/src/model.rs`): three pairs of 3x3 convs
(32, 64, 128 channels, same padding) each followed by 2x2 max pooling and dropout 0.3, then
Linear(2048, 128) and Linear(128, classes)."""

from __future__ import annotations

from burn_nn import (
    Conv2dConfig,
    DropoutConfig,
    LinearConfig,
    MaxPool2dConfig,
    Module,
    PaddingConfig2d,
    Relu,
)
from burn_tensor import Tensor


def _conv(c_in: int, c_out: int, device) -> Module:
    return Conv2dConfig([c_in, c_out], [3, 3]).with_padding(PaddingConfig2d.Same).init(device)


class Cnn(Module):
    """Images `[batch, 3, 32, 32]` -> logits `[batch, num_classes]`."""

    activation: Relu
    dropout: Module
    pool: Module
    conv1: Module
    conv2: Module
    conv3: Module
    conv4: Module
    conv5: Module
    conv6: Module
    fc1: Module
    fc2: Module

    @classmethod
    def new(cls, num_classes: int, device) -> Cnn:
        return cls(
            activation=Relu(),
            dropout=DropoutConfig(0.3).init(),
            pool=MaxPool2dConfig([2, 2]).with_strides([2, 2]).init(),
            conv1=_conv(3, 32, device), conv2=_conv(32, 32, device),
            conv3=_conv(32, 64, device), conv4=_conv(64, 64, device),
            conv5=_conv(64, 128, device), conv6=_conv(128, 128, device),
            fc1=LinearConfig(2048, 128).init(device),
            fc2=LinearConfig(128, num_classes).init(device),
        )  # fmt: skip

    def forward(self, x: Tensor) -> Tensor:
        act = self.activation.forward
        for a, b in ((self.conv1, self.conv2), (self.conv3, self.conv4), (self.conv5, self.conv6)):
            x = act(b.forward(act(a.forward(x))))
            x = self.dropout.forward(self.pool.forward(x))
        x = x.flatten(1, 3)
        x = self.dropout.forward(act(self.fc1.forward(x)))
        return self.fc2.forward(x)
