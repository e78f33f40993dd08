"""`MnistBatcher`: MNIST-style items -> normalized image and target tensors."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from burn_tensor import Tensor


@dataclass
class MnistBatch:
    images: Tensor  # [batch, 28, 28] Float
    targets: Tensor  # [batch] Int


class MnistBatcher:
    """Stacks items on the host, then makes one tensor per field on the device.

    Normalization as in the book (mean 0.1307, std 0.3081 from the PyTorch MNIST example).
    """

    def __init__(self, device=None):
        self.device = device

    def batch(self, items, device=None) -> MnistBatch:
        device = device if device is not None else self.device
        images = np.stack([np.asarray(item.image, dtype=np.float32) for item in items])
        images = ((images / 255.0) - 0.1307) / 0.3081
        targets = np.array([int(item.label) for item in items], dtype=np.int64)
        return MnistBatch(Tensor.from_data(images, device), Tensor.from_data(targets, device))
