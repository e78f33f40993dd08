"""Burn's wgan example: a Wasserstein GAN (weight clipping, RMSProp) on the bundled digits."""

from .model import Clip, Discriminator, Generator, ModelConfig
from .training import Result, TrainingConfig, digits_in_tanh_range, save_grid, train

__all__ = [
    "Clip", "Discriminator", "Generator", "ModelConfig", "Result", "TrainingConfig",
    "digits_in_tanh_range", "save_grid", "train",
]  # fmt: skip
