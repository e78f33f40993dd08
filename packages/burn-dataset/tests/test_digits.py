"""DigitsDataset: the bundled UCI digits, upscaled to MNIST-like 28x28 items."""

import numpy as np
import pytest
from burn_dataset import DigitsDataset, MnistItem
from burn_dataset.vision import upscale_digits
from burn_dataset.vision._digits import _bilinear_matrix

FIRST_ROW = [0, 0, 5, 13, 9, 1, 0, 0, 0, 0, 13, 15, 10, 15, 5, 0]  # first 16 pixels in the csv


def test_sizes_and_fixed_split():
    train, test = DigitsDataset.train(), DigitsDataset.test()
    assert (len(train), len(test)) == (1437, 360)
    raw, labels = DigitsDataset.raw_8x8()
    assert raw.shape == (1797, 8, 8) and labels.shape == (1797,)
    assert raw[0].ravel()[:16].tolist() == FIRST_ROW and labels[0] == 0
    rows = np.random.default_rng(0).permutation(1797)  # the documented fixed split
    assert train.labels.tolist() == labels[rows[:1437]].tolist()
    assert test.labels.tolist() == labels[rows[1437:]].tolist()
    assert sorted(rows[:1437].tolist() + rows[1437:].tolist()) == list(range(1797))
    assert np.bincount(labels).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]


def test_items_look_like_mnist_items():
    item = DigitsDataset.train().get(0)
    assert isinstance(item, MnistItem)
    assert item.image.shape == (28, 28) and item.image.dtype == np.float32
    assert isinstance(item.label, int) and item.label == 6  # row 360 of the file
    images = DigitsDataset.test().images
    assert images.min() >= 0 and images.max() <= 255 and images.max() > 250
    border = np.ones((28, 28), bool)
    border[4:24, 4:24] = False
    assert np.all(images[:, border] == 0)  # digit centred in a 20x20 box, like MNIST
    assert DigitsDataset.test().get(360) is None


def test_bilinear_weights_by_hand():
    w = _bilinear_matrix(8, 20)
    assert w.shape == (20, 8) and np.allclose(w.sum(axis=1), 1)
    # output 0 samples input -0.3 -> clamped to pixel 0; output 2 samples 0.5 -> half/half
    assert w[0].tolist() == [1, 0, 0, 0, 0, 0, 0, 0]
    assert np.allclose(w[2], [0.5, 0.5, 0, 0, 0, 0, 0, 0])
    # output 3 samples (3.5 * 0.4 - 0.5) = 0.9 -> 0.1 * p0 + 0.9 * p1
    assert np.allclose(w[3], [0.1, 0.9, 0, 0, 0, 0, 0, 0])
    assert w[19].tolist() == [0, 0, 0, 0, 0, 0, 0, 1]


def test_upscale_by_hand():
    full = upscale_digits(np.full((1, 8, 8), 16))
    assert np.all(full[0, 4:24, 4:24] == 255) and full[0, :4].sum() == 0
    one = np.zeros((1, 8, 8))
    one[0, 0, 0] = 16  # a single top-left pixel -> a bilinear blob in the top-left corner
    out = upscale_digits(one)[0]
    w = _bilinear_matrix(8, 20)[:, 0]
    np.testing.assert_allclose(out[4:24, 4:24], 255 * np.outer(w, w), rtol=1e-6)
    with pytest.raises(ValueError, match=r"expected digits of shape \[N, 8, 8\], got \(8, 8\)"):
        upscale_digits(np.zeros((8, 8)))


def test_backing_arrays_are_read_only():
    ds = DigitsDataset.train()
    with pytest.raises(ValueError, match="read-only"):
        ds.images[0, 0, 0] = 1
    item = ds.get(0)
    item.image += 1  # items are copies
    assert ds.get(0).image[0, 0] == 0
