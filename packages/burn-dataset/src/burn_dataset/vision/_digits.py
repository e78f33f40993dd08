"""`DigitsDataset`: the UCI handwritten digits shipped with the package, shaped like MNIST."""

from __future__ import annotations

import functools
import gzip
from importlib import resources

import numpy as np

from burn_dataset.vision._items import ArrayImageDataset

DIGITS_TRAIN_SIZE = 1437  # 80% of the 1797 rows; the other 360 are the test split
# The file is ordered by writer, so "first 80% / last 20%" would test on unseen writers only and
# cap accuracy; a fixed seeded permutation gives the usual random split, identical on every run.
DIGITS_SPLIT_SEED = 0
DIGITS_TOTAL = 1797
_SIZE, _CANVAS = 20, 28  # MNIST fits each digit in a 20x20 box centred in a 28x28 image


def _bilinear_matrix(n_in: int, n_out: int) -> np.ndarray:
    """`[n_out, n_in]` weights of a 1-D bilinear resize with pixel-centre alignment.

    Output pixel `o` samples the input at `(o + 0.5) * n_in / n_out - 0.5` (clamped to the
    edges), the convention of Pillow and OpenCV, so the image is not shifted by half a pixel.
    """
    pos = np.clip((np.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0, n_in - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, n_in - 1)
    frac = pos - lo
    weights = np.zeros((n_out, n_in))
    np.add.at(weights, (np.arange(n_out), lo), 1 - frac)
    np.add.at(weights, (np.arange(n_out), hi), frac)
    return weights


def upscale_digits(images_8x8: np.ndarray) -> np.ndarray:
    """Turn `[N, 8, 8]` digits with values 0..16 into MNIST-like `[N, 28, 28]` float32 images.

    Steps: scale 0..16 to 0..255 (MNIST's pixel range), resize bilinearly to 20x20 (separable,
    so one matrix product per axis for the whole batch), and centre in a 28x28 zero canvas with
    a 4-pixel border, like MNIST's own preprocessing.

    Example:
        >>> out = upscale_digits(np.full((1, 8, 8), 16.0))
        >>> out.shape, float(out[0, 14, 14]), float(out[0, 0, 0])
        ((1, 28, 28), 255.0, 0.0)
    """
    images = np.asarray(images_8x8, dtype=np.float64)
    if images.ndim != 3 or images.shape[1:] != (8, 8):
        raise ValueError(f"expected digits of shape [N, 8, 8], got {images.shape}")
    resize = _bilinear_matrix(8, _SIZE)
    scaled = np.einsum("oi,nij,pj->nop", resize, images * (255.0 / 16.0), resize)
    out = np.zeros((len(images), _CANVAS, _CANVAS), dtype=np.float32)
    border = (_CANVAS - _SIZE) // 2
    out[:, border : border + _SIZE, border : border + _SIZE] = scaled
    return out


@functools.cache
def _load_all() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(images 28x28, labels, raw 8x8) for all 1797 digits; decoded once per process."""
    data = resources.files("burn_dataset.vision").joinpath("data/digits.csv.gz").read_bytes()
    table = np.loadtxt(gzip.decompress(data).decode("ascii").splitlines(), delimiter=",")
    raw = table[:, :64].reshape(-1, 8, 8)
    labels = table[:, 64].astype(np.int64)
    images = upscale_digits(raw)
    for array in (images, labels, raw):
        array.flags.writeable = False
    return images, labels, raw


def _split() -> np.ndarray:
    return np.random.default_rng(DIGITS_SPLIT_SEED).permutation(DIGITS_TOTAL)


class DigitsDataset(ArrayImageDataset):
    """1,797 real handwritten digits (UCI), bundled so examples and tests run offline.

    Items are `MnistItem`s exactly like `MnistDataset`'s: a float32 `[28, 28]` image with values
    in 0..255 and an int label, so a model or batcher written for MNIST runs on it unchanged.
    The original 8x8 images (values 0..16) are upscaled by `upscale_digits`. The split is fixed:
    a permutation of the 1,797 rows seeded with `DIGITS_SPLIT_SEED`; `train()` takes the first
    1,437 permuted rows, `test()` the remaining 360.

    Source: the "Optical Recognition of Handwritten Digits" data set by E. Alpaydin and
    C. Kaynak, UCI Machine Learning Repository (CC BY 4.0), as distributed in scikit-learn's
    `digits.csv.gz`.

    Example:
        >>> train, test = DigitsDataset.train(), DigitsDataset.test()
        >>> len(train), len(test), train.get(0).image.shape, train.get(0).label
        (1437, 360, (28, 28), 6)
    """

    @classmethod
    def train(cls) -> DigitsDataset:
        """1,437 digits (the fixed training split)."""
        images, labels, _ = _load_all()
        rows = _split()[:DIGITS_TRAIN_SIZE]
        return cls(images[rows], labels[rows], source="digits")

    @classmethod
    def test(cls) -> DigitsDataset:
        """The other 360 digits (the fixed test split)."""
        images, labels, _ = _load_all()
        rows = _split()[DIGITS_TRAIN_SIZE:]
        return cls(images[rows], labels[rows], source="digits")

    @staticmethod
    def raw_8x8() -> tuple[np.ndarray, np.ndarray]:
        """All 1,797 original images `[N, 8, 8]` (values 0..16) and labels, read-only."""
        _, labels, raw = _load_all()
        return raw, labels
