"""Exercise 6 (Step 6, built-in layers): a small CNN for 1-channel 28x28 images.

Conv2d 1 -> 16 (3x3, same padding) -> ReLU -> MaxPool 2x2 -> Conv2d 16 -> 32 (3x3, same) -> ReLU
-> AdaptiveAvgPool 1x1 -> flatten -> Linear(32, 10); a random `[4, 1, 28, 28]` batch must give
`[4, 10]`.
"""

from __future__ import annotations

from burn_ndarray import NdArray
from burn_nn import Linear, LinearConfig, Module, PaddingConfig2d, Relu, config
from burn_nn.conv import Conv2d, Conv2dConfig
from burn_nn.pool import AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig, MaxPool2d, MaxPool2dConfig
from burn_tensor import Distribution, Tensor


class Cnn(Module):
    """`[batch, 1, 28, 28] -> [batch, num_classes]`."""

    conv1: Conv2d
    pool: MaxPool2d
    conv2: Conv2d
    adaptive: AdaptiveAvgPool2d
    linear: Linear
    activation: Relu

    def forward_features(self, images: Tensor) -> list[Tensor]:
        """Every stage's output, for printing the shapes: conv1+pool, conv2+adaptive, flatten."""
        x = self.pool.forward(self.activation.forward(self.conv1.forward(images)))  # [b,16,14,14]
        y = self.adaptive.forward(self.activation.forward(self.conv2.forward(x)))  # [b,32,1,1]
        z = y.flatten(1, 3)  # [b, 32]
        return [x, y, z]

    def forward(self, images: Tensor) -> Tensor:
        return self.linear.forward(self.forward_features(images)[-1])  # [b, num_classes]


@config
class CnnConfig:
    num_classes: int = 10

    def init(self, device=None) -> Cnn:
        same = PaddingConfig2d.Same
        return Cnn(
            conv1=Conv2dConfig([1, 16], [3, 3]).with_padding(same).init(device),
            pool=MaxPool2dConfig([2, 2]).with_strides([2, 2]).init(),
            conv2=Conv2dConfig([16, 32], [3, 3]).with_padding(same).init(device),
            adaptive=AdaptiveAvgPool2dConfig([1, 1]).init(),
            linear=LinearConfig(32, self.num_classes).init(device),
            activation=Relu.new(),
        )


def run(device=None, seed: int = 6) -> tuple[Cnn, Tensor, Tensor]:
    """Print every stage's shape and the parameter count; return `(model, images, logits)`."""
    device = device if device is not None else NdArray().device()
    device.seed(seed)

    model = CnnConfig().init(device)
    images = Tensor.random([4, 1, 28, 28], Distribution.Normal(0.0, 1.0), device)
    stages = model.forward_features(images)
    logits = model.forward(images)

    assert logits.dims() == [4, 10], logits.dims()
    print(f"Input shape: {images.dims()}")
    names = ["conv1 + relu + maxpool", "conv2 + relu + adaptive", "flatten"]
    for name, stage in zip(names, stages):
        print(f"After {name}: {stage.dims()}")
    print(f"Output shape: {logits.dims()}")
    print(f"Parameters: {model.num_params()}")
    return model, images, logits


if __name__ == "__main__":
    run()
