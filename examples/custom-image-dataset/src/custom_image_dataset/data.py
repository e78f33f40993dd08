"""Batching (CIFAR-10's per-channel normalization, as Burn's `data.rs`) and a generator of
small image folders for offline runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from burn_tensor import Tensor

MEAN = [0.4914, 0.48216, 0.44653]
STD = [0.24703, 0.24349, 0.26159]


class Normalizer:
    """`(x - mean) / std` per channel, `mean`/`std` as `[1, 3, 1, 1]` tensors."""

    def __init__(self, device) -> None:
        self.mean = Tensor.from_floats(MEAN, device).reshape([1, 3, 1, 1])
        self.std = Tensor.from_floats(STD, device).reshape([1, 3, 1, 1])

    def normalize(self, x: Tensor) -> Tensor:
        return (x - self.mean) / self.std


@dataclass
class ClassificationBatch:
    images: Tensor  # [batch, 3, 32, 32] Float
    targets: Tensor  # [batch] Int
    images_path: list[str]


class ClassificationBatcher:
    """`ImageDatasetItem`s (32x32 RGB, `Label`) -> normalized `[batch, 3, 32, 32]` images."""

    def batch(self, items, device) -> ClassificationBatch:
        for item in items:
            if item.image.shape != (32, 32, 3):
                raise ValueError(
                    f"{item.image_path}: expected a 32x32 RGB image, got {list(item.image.shape)}"
                )
        images = np.stack([item.image for item in items]).astype(np.float32) / 255.0
        images = Tensor.from_data(images.transpose(0, 3, 1, 2).copy(), device)  # [B, C, H, W]
        targets = Tensor.from_data(np.array([item.label for item in items], np.int64), device)
        images = Normalizer(device).normalize(images)
        return ClassificationBatch(images, targets, [item.image_path for item in items])


def generate_image_folder(root: str | Path, per_class: int, seed: int = 0, classes: int = 10):
    """`root/class<k>/<i>.png`: 32x32 images whose class is a stripe direction and a colour
    tint, plus noise (learnable, not trivially: the noise is as large as the tint)."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:32, 0:32]
    root = Path(root)
    for k in range(classes):
        folder = root / f"class{k}"
        folder.mkdir(parents=True, exist_ok=True)
        angle = np.pi * k / classes
        tint = np.array([np.cos(angle), np.sin(angle), np.cos(2 * angle)]) * 40
        for i in range(per_class):
            phase = rng.uniform(0, 2 * np.pi)
            stripes = np.sin((xx * np.cos(angle) + yy * np.sin(angle)) * 0.8 + phase)
            img = 128 + 60 * stripes[..., None] + tint + rng.normal(0, 40, (32, 32, 3))
            Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).save(folder / f"{i}.png")
    return root
