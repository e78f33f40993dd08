"""`DigitsBatcher`: MNIST-style items (bundled digits) -> normalized images and Int targets."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from burn_tensor import Tensor


@dataclass
class DigitsBatch:
    images: Tensor  # [batch, 28, 28] Float
    targets: Tensor  # [batch] Int


class DigitsBatcher:
    """Stacks items on the host, normalizes as the book's MnistBatcher (mean 0.1307, std 0.3081)
    and makes one tensor per field on the device the loader serves."""

    def __init__(self, device=None):
        self.device = device

    def batch(self, items, device=None) -> DigitsBatch:
        device = device if device is not None else self.device
        images = np.stack([np.asarray(item.image, dtype=np.float32) for item in items])
        images = ((images / 255.0) - 0.1307) / 0.3081
        targets = np.array([int(item.label) for item in items], dtype=np.int64)
        return DigitsBatch(Tensor.from_data(images, device), Tensor.from_data(targets, device))
