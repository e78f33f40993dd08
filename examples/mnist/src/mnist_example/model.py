"""Burn's mnist example model (`examples/mnist/src/model.rs`): two conv blocks (conv, batch
norm, ReLU, 2x2 max pool) and three linear layers with GELU and dropout. Its parameter paths are
Burn's (`conv1.conv.weight`, `conv1.norm.gamma`, `fc1.weight`, ...), so a Burnpack written by
Rust Burn for this model loads into it."""

from __future__ import annotations

from burn_nn import (
    BatchNormConfig,
    Conv2dConfig,
    CrossEntropyLossConfig,
    DropoutConfig,
    Gelu,
    LinearConfig,
    MaxPool2dConfig,
    Module,
    PaddingConfig2d,
    Relu,
)
from burn_tensor import Tensor
from burn_train import ClassificationOutput, TrainOutput

NUM_CLASSES = 10


class ConvBlock(Module):
    conv: Module
    norm: Module
    pool: Module | None
    activation: Relu

    @classmethod
    def new(cls, channels, kernel_size, device, pool: bool) -> ConvBlock:
        return cls(
            conv=Conv2dConfig(channels, kernel_size).with_padding(PaddingConfig2d.Valid)
            .init(device),
            norm=BatchNormConfig(channels[1]).init(device),
            pool=MaxPool2dConfig([2, 2]).with_strides([2, 2]).init() if pool else None,
            activation=Relu(),
        )  # fmt: skip

    def forward(self, x: Tensor) -> Tensor:
        x = self.activation.forward(self.norm.forward(self.conv.forward(x)))
        return self.pool.forward(x) if self.pool is not None else x


class Model(Module):
    """Images `[batch, 28, 28]` -> logits `[batch, 10]`."""

    conv1: ConvBlock
    conv2: ConvBlock
    dropout: Module
    fc1: Module
    fc2: Module
    fc3: Module
    activation: Gelu

    @classmethod
    def new(cls, device) -> Model:
        return cls(
            conv1=ConvBlock.new([1, 64], [3, 3], device, True),  # -> [batch, 64, 13, 13]
            conv2=ConvBlock.new([64, 64], [3, 3], device, True),  # -> [batch, 64, 5, 5]
            dropout=DropoutConfig(0.25).init(),
            fc1=LinearConfig(64 * 5 * 5, 128).init(device),
            fc2=LinearConfig(128, 128).init(device),
            fc3=LinearConfig(128, NUM_CLASSES).init(device),
            activation=Gelu(),
        )

    def forward(self, images: Tensor) -> Tensor:
        batch_size, height, width = images.dims()
        x = images.reshape([batch_size, 1, height, width]).detach()
        x = self.conv2.forward(self.conv1.forward(x))
        b, c, h, w = x.dims()
        x = x.reshape([b, c * h * w])
        x = self.dropout.forward(self.activation.forward(self.fc1.forward(x)))
        x = self.dropout.forward(self.activation.forward(self.fc2.forward(x)))
        return self.fc3.forward(x)

    def forward_classification(self, batch) -> ClassificationOutput:
        output = self.forward(batch.images)
        loss = CrossEntropyLossConfig().init(output.device).forward(output, batch.targets)
        return ClassificationOutput(loss, output, batch.targets)

    def train_step(self, batch) -> TrainOutput:
        item = self.forward_classification(batch)
        return TrainOutput(self, item.loss.backward(), item)

    def valid_step(self, batch) -> ClassificationOutput:
        return self.forward_classification(batch)
