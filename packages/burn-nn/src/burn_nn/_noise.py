"""`GaussianNoise` (Burn's `nn::GaussianNoise`): additive N(0, std^2) noise while training."""

from __future__ import annotations

import math

from burn_tensor import Distribution, Tensor

from ._config import config
from ._module import Module
from ._util import is_training


@config
class GaussianNoiseConfig:
    """Config of `GaussianNoise` (no device: `GaussianNoiseConfig(0.1).init()`).

    Args:
        std: standard deviation of the noise, >= 0.
    """

    std: float

    def init(self, device=None) -> GaussianNoise:
        if not (isinstance(self.std, int | float) and math.isfinite(self.std) and self.std >= 0):
            raise ValueError(
                f"GaussianNoiseConfig: std must be a finite number >= 0, got {self.std!r}"
            )
        return GaussianNoise(std=float(self.std))


class GaussianNoise(Module):
    """Adds N(0, std^2) noise to the input while training (the input is on an autodiff
    device, Burn's `B::ad_enabled()`); the identity otherwise, or when std is 0.

    Shapes: any Float -> same.

    Example:
        >>> from burn_ndarray import NdArray
        >>> x = Tensor.ones([2, 2], NdArray().device())
        >>> GaussianNoiseConfig(0.5).init().forward(x).tolist()  # not autodiff: identity
        [[1.0, 1.0], [1.0, 1.0]]
    """

    std: float

    def forward(self, x: Tensor) -> Tensor:
        if not is_training(x) or self.std == 0.0:
            return x
        noise = Tensor.random(x.dims(), Distribution.normal(0.0, self.std), x.device)
        return x.add(noise.cast(x.dtype))
