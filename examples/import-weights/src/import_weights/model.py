"""The digits classifier in burn-py, the same architecture as `generate_weights.py`'s `TorchNet`.

Field names follow the torch module's attribute names (`conv1`, `norm1`, `conv2`, `fc`), so the
state dict's keys need no remapping; the adapters transpose `fc.weight` and rename `norm1`'s
`weight`/`bias` to `gamma`/`beta`.
"""

from __future__ import annotations

from burn_nn import (
    BatchNorm,
    BatchNormConfig,
    Conv2d,
    Conv2dConfig,
    Linear,
    LinearConfig,
    MaxPool2d,
    MaxPool2dConfig,
    Module,
    Relu,
)
from burn_tensor import Tensor


class DigitsNet(Module):
    """conv 3x3 (1->8) -> BatchNorm -> ReLU -> max-pool 2 -> conv 3x3 (8->16) -> ReLU ->
    max-pool 2 -> flatten -> Linear(400, 10).

    Shapes: images `[batch, 1, 28, 28]` (pixels scaled to 0..1) -> logits `[batch, 10]`.
    """

    conv1: Conv2d
    norm1: BatchNorm
    conv2: Conv2d
    fc: Linear
    pool: MaxPool2d
    relu: Relu

    @classmethod
    def init(cls, device) -> DigitsNet:
        return cls(
            conv1=Conv2dConfig([1, 8], [3, 3]).init(device),
            norm1=BatchNormConfig(8).init(device),
            conv2=Conv2dConfig([8, 16], [3, 3]).init(device),
            fc=LinearConfig(16 * 5 * 5, 10).init(device),
            pool=MaxPool2dConfig([2, 2]).init(),
            relu=Relu(),
        )

    def forward(self, images: Tensor) -> Tensor:
        x = self.pool.forward(self.relu.forward(self.norm1.forward(self.conv1.forward(images))))
        x = self.pool.forward(self.relu.forward(self.conv2.forward(x)))
        return self.fc.forward(x.reshape([x.dims()[0], -1]))
