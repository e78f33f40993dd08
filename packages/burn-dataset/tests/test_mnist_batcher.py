"""The Burn Book's MNIST batcher, written against burn_tensor, run on the bundled digits."""

from dataclasses import dataclass

import numpy as np
from burn_dataset import DataLoaderBuilder, DigitsDataset
from burn_ndarray import NdArray
from burn_tensor import Tensor


@dataclass
class MnistBatch:
    images: Tensor  # [batch, 28, 28]
    targets: Tensor  # [batch], Int


class MnistBatcher:
    def batch(self, items, device):
        images = [Tensor.from_data(item.image, device).reshape([1, 28, 28]) for item in items]
        images = [((t / 255) - 0.1307) / 0.3081 for t in images]  # as in the book
        targets = [
            Tensor.from_data(np.array([item.label], dtype=np.int64), device) for item in items
        ]
        return MnistBatch(Tensor.cat(images, 0), Tensor.cat(targets, 0))


def test_book_batcher_runs_unchanged_on_digits():
    device = NdArray().device()
    dataset = DigitsDataset.test()
    loader = (
        DataLoaderBuilder(MnistBatcher())
        .batch_size(64)
        .shuffle(42)
        .num_workers(2)
        .set_device(device)
        .build(dataset)
    )
    batches = list(loader)
    assert [b.images.dims() for b in batches] == [[64, 28, 28]] * 5 + [[40, 28, 28]]
    assert [b.targets.dims() for b in batches] == [[64]] * 5 + [[40]]
    order = np.random.default_rng([42, 0]).permutation(len(dataset))
    first = batches[0].images.numpy()
    expected = (dataset.images[order[0]] / 255 - 0.1307) / 0.3081
    np.testing.assert_allclose(first[0], expected, rtol=1e-5, atol=1e-5)
    assert batches[0].targets.numpy().tolist() == dataset.labels[order[:64]].tolist()
