"""Data shared by the real-component end-to-end tests: a 3-class blob set, its batch and batcher."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from burn_tensor import Tensor

N_CLASSES, D_IN = 3, 4
CENTERS = np.array([[2, 0, 0, 1], [0, 2, 0, -1], [0, 0, 2, 0]], dtype=np.float64)


def make_items(n: int, seed: int, dtype=np.float32) -> list[tuple[np.ndarray, int]]:
    """n items (features [D_IN], label): class centres plus unit Gaussian noise, fixed by seed."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, N_CLASSES, n)
    xs = (CENTERS[labels] + rng.normal(0, 1.0, (n, D_IN))).astype(dtype)
    return [(xs[i], int(labels[i])) for i in range(n)]


@dataclass
class Batch:
    inputs: Tensor  # [batch, D_IN] Float
    targets: Tensor  # [batch] Int


class Batcher:
    def __init__(self, dtype=np.float32):
        self.dtype = dtype

    def batch(self, items, device) -> Batch:
        x = np.stack([i[0] for i in items]).astype(self.dtype)
        y = np.array([i[1] for i in items], dtype=np.int64)
        return Batch(Tensor.from_data(x, device), Tensor.from_data(y, device))
