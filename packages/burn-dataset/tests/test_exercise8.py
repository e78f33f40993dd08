"""The foundations tutorial's Exercise 8: an XOR dataset, a batcher, a loader, batch shapes."""

from dataclasses import dataclass

import numpy as np
from burn_dataset import DataLoaderBuilder, InMemDataset
from burn_ndarray import NdArray
from burn_tensor import Tensor


@dataclass
class Sample:
    features: np.ndarray  # [2] float32, x1 and x2 in {0, 1}
    label: int  # x1 XOR x2


@dataclass
class XorBatch:
    inputs: Tensor  # [batch, 2]
    targets: Tensor  # [batch], Int


class XorBatcher:
    def __init__(self, device):
        self.device = device

    def batch(self, items, device):
        inputs = [Tensor.from_data(s.features[None, :], self.device) for s in items]  # [1, 2] each
        targets = [
            Tensor.from_data(np.array([s.label], dtype=np.int64), self.device) for s in items
        ]
        return XorBatch(inputs=Tensor.cat(inputs, 0), targets=Tensor.cat(targets, 0))


def xor_dataset(n=200, seed=0):
    bits = np.random.default_rng(seed).integers(0, 2, size=(n, 2))
    return InMemDataset(
        Sample(features=row.astype(np.float32), label=int(row[0] ^ row[1])) for row in bits
    )


def test_exercise_8_xor_loader_shapes():
    device = NdArray().device()
    dataset = xor_dataset()
    assert len(dataset) == 200
    assert all(s.label == int(s.features[0]) ^ int(s.features[1]) for s in dataset)

    loader = (
        DataLoaderBuilder(XorBatcher(device))
        .batch_size(16)
        .shuffle(42)
        .num_workers(4)
        .build(dataset)
    )
    shapes = [(batch.inputs.dims(), batch.targets.dims()) for batch in loader]
    # 200 = 12 * 16 + 8: twelve full batches and the kept partial one
    assert shapes == [([16, 2], [16])] * 12 + [([8, 2], [8])]

    # the tensors hold the items: every label equals XOR of the inputs
    for batch in loader:
        x = batch.inputs.numpy().astype(np.int64)
        assert np.array_equal(batch.targets.numpy(), x[:, 0] ^ x[:, 1])
        assert batch.inputs.numpy().dtype == np.float32
