"""Exercise 8 (Step 8, datasets and batching): 200 random XOR samples in an `InMemDataset`, a
`Batcher`, a `DataLoader` with batch size 16; loop over one epoch printing each batch's shapes.

Burn's `#[derive(Clone, Debug)] struct Sample` is a frozen dataclass; the `Batcher` trait is a
class with `batch(items, device)`; the random bits come from Python's `random.Random(seed)`
(the Rust would use the `rand` crate).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from burn_dataset import DataLoaderBuilder, InMemDataset
from burn_ndarray import NdArray
from burn_tensor import Tensor, TensorData

NUM_SAMPLES, BATCH_SIZE = 200, 16


@dataclass(frozen=True)
class XorSample:
    """`features = (x1, x2)` with x1, x2 in {0, 1}; `label = x1 XOR x2`."""

    features: tuple[float, float]
    label: int


@dataclass
class XorBatch:
    inputs: Tensor  # [batch, 2] Float
    targets: Tensor  # [batch] Int


class XorBatcher:
    """Items -> `XorBatch`, as in the tutorial: one `[1, 2]` row per item, then `Tensor::cat`."""

    def __init__(self, device):
        self.device = device

    def batch(self, items: list[XorSample], device=None) -> XorBatch:
        device = device if device is not None else self.device
        inputs = [Tensor.from_floats(item.features, device).unsqueeze_dim(0) for item in items]
        targets = [Tensor.from_data(TensorData([item.label]), device) for item in items]
        return XorBatch(Tensor.cat(inputs, 0), Tensor.cat(targets, 0))


def make_random_xor_dataset(num_samples: int = NUM_SAMPLES, seed: int = 8) -> InMemDataset:
    """`num_samples` random XOR samples (reproducible for a seed)."""
    rng = random.Random(seed)
    samples = []
    for _ in range(num_samples):
        x1, x2 = rng.randint(0, 1), rng.randint(0, 1)
        samples.append(XorSample((float(x1), float(x2)), x1 ^ x2))
    return InMemDataset(samples)


def run(device=None, seed: int = 8) -> dict[str, object]:
    """Print the dataset size, a sample, and each batch's input/target shapes for one epoch;
    return the dataset and the shapes."""
    device = device if device is not None else NdArray().device()

    dataset = make_random_xor_dataset(NUM_SAMPLES, seed)
    print(f"Dataset length: {len(dataset)}")
    print(f"Sample 0: {dataset.get(0)}")

    dataloader = (
        DataLoaderBuilder(XorBatcher(device)).batch_size(BATCH_SIZE).shuffle(seed).build(dataset)
    )
    shapes = []
    for i, batch in enumerate(dataloader.iter()):
        shapes.append((batch.inputs.dims(), batch.targets.dims()))
        print(f"Batch {i:>2}: inputs {batch.inputs.dims()}, targets {batch.targets.dims()}")
    return {"dataset": dataset, "shapes": shapes}


if __name__ == "__main__":
    run()
