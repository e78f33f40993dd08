"""Generator and critic of Burn's wgan example (MLPs), and the `Clip` mapper.

Generator: noise `[batch, latent]` -> four blocks Linear + BatchNorm (epsilon 0.8, as Burn) +
LeakyReLU(0.2) widening 128, 256, 512, 1024 -> Linear -> tanh -> `[batch, 784]` in [-1, 1].
Critic: `[batch, 1, 28, 28]` -> flatten -> 512 -> 256 -> 1 (LeakyReLU(0.2) between; no sigmoid:
its output is a score, not a probability).
"""

from __future__ import annotations

from burn_nn import (
    BatchNorm, BatchNormConfig, LeakyRelu, LeakyReluConfig, Linear, LinearConfig, Module,
    ModuleMapper, Tanh, config,
)  # fmt: skip
from burn_tensor import Tensor


class LayerBlock(Module):
    """Linear -> BatchNorm -> LeakyReLU(0.2); `[batch, d_in]` -> `[batch, d_out]`."""

    fc: Linear
    bn: BatchNorm
    act: LeakyRelu

    def forward(self, x: Tensor) -> Tensor:
        return self.act.forward(self.bn.forward(self.fc.forward(x)))


def _block(d_in: int, d_out: int, device) -> LayerBlock:
    return LayerBlock(
        fc=LinearConfig(d_in, d_out).init(device),
        bn=BatchNormConfig(d_out, epsilon=0.8).init(device),
        act=LeakyReluConfig(negative_slope=0.2).init(),
    )


class Generator(Module):
    """`[batch, latent_dim]` -> `[batch, channels * size * size]` in [-1, 1]."""

    layer1: LayerBlock
    layer2: LayerBlock
    layer3: LayerBlock
    layer4: LayerBlock
    fc: Linear
    tanh: Tanh

    def forward(self, noise: Tensor) -> Tensor:
        x = noise
        for layer in (self.layer1, self.layer2, self.layer3, self.layer4):
            x = layer.forward(x)
        return self.tanh.forward(self.fc.forward(x))


class Discriminator(Module):
    """The critic: `[batch, channels, size, size]` -> `[batch, 1]` scores."""

    fc1: Linear
    act1: LeakyRelu
    fc2: Linear
    act2: LeakyRelu
    fc3: Linear

    def forward(self, images: Tensor) -> Tensor:
        x = self.act1.forward(self.fc1.forward(images.flatten(1, 3)))
        return self.fc3.forward(self.act2.forward(self.fc2.forward(x)))


@config
class ModelConfig:
    """Burn's: latent 100, 28x28, one channel."""

    latent_dim: int = 100
    image_size: int = 28
    channels: int = 1

    def init(self, device) -> tuple[Generator, Discriminator]:
        pixels = self.channels * self.image_size * self.image_size
        generator = Generator(
            layer1=_block(self.latent_dim, 128, device), layer2=_block(128, 256, device),
            layer3=_block(256, 512, device), layer4=_block(512, 1024, device),
            fc=LinearConfig(1024, pixels).init(device), tanh=Tanh(),
        )  # fmt: skip
        critic = Discriminator(
            fc1=LinearConfig(pixels, 512).init(device), act1=LeakyReluConfig(negative_slope=0.2).init(),
            fc2=LinearConfig(512, 256).init(device), act2=LeakyReluConfig(negative_slope=0.2).init(),
            fc3=LinearConfig(256, 1).init(device),
        )  # fmt: skip
        return generator, critic


class Clip(ModuleMapper):
    """Clamp every parameter into `[min, max]` (WGAN's weight clipping keeps the critic
    Lipschitz). The clamped value starts a fresh leaf, still tracked, as Burn's mapper does."""

    def __init__(self, min: float, max: float) -> None:
        self.min, self.max = min, max

    def map(self, id, tensor: Tensor) -> Tensor:
        tracked = tensor.is_require_grad()
        out = tensor.detach().clamp(self.min, self.max)
        return out.require_grad() if tracked else out
