"""The XOR data set (the truth table repeated), its items and its batcher (tutorial Step 10)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from burn_dataset import InMemDataset
from burn_tensor import Tensor

#: The four XOR inputs, in truth-table order; their labels are 0, 1, 1, 0.
XOR_INPUTS: list[list[float]] = [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]


@dataclass(frozen=True)
class XorItem:
    """One sample: `x` two floats in {0, 1}, `y = x[0] XOR x[1]`."""

    x: tuple[float, float]
    y: int


@dataclass
class XorBatch:
    inputs: Tensor  # [batch, 2] Float
    targets: Tensor  # [batch] Int


def make_xor_dataset(repeats: int = 200) -> InMemDataset:
    """The truth table repeated `repeats` times (4 * repeats items), as in the tutorial."""
    table = [XorItem((a, b), int(a) ^ int(b)) for a, b in XOR_INPUTS]
    return InMemDataset([item for _ in range(repeats) for item in table])


class XorBatcher:
    """Stacks items into `[batch, 2]` inputs and `[batch]` targets on the loader's device."""

    def __init__(self, device=None):
        self.device = device

    def batch(self, items: list[XorItem], device=None) -> XorBatch:
        device = device if device is not None else self.device
        inputs = np.array([item.x for item in items], dtype=np.float32)
        targets = np.array([item.y for item in items], dtype=np.int64)
        return XorBatch(Tensor.from_data(inputs, device), Tensor.from_data(targets, device))
