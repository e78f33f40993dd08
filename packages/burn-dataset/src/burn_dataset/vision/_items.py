"""`MnistItem` and the array-backed dataset shared by MNIST and the bundled digits."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from burn_dataset._base import Dataset, check_index


@dataclass
class MnistItem:
    """One handwritten digit: a `[28, 28]` float32 image with values in 0..255, and its label.

    Example:
        >>> import numpy as np
        >>> item = MnistItem(image=np.zeros((28, 28), np.float32), label=7)
        >>> item.image.shape, item.label
        ((28, 28), 7)
    """

    image: np.ndarray
    label: int


class ArrayImageDataset(Dataset[MnistItem]):
    """Images `[N, 28, 28]` and labels `[N]` held as numpy arrays, served as `MnistItem`s."""

    def __init__(self, images: np.ndarray, labels: np.ndarray, source: str = "images") -> None:
        images, labels = np.asarray(images), np.asarray(labels)
        if images.ndim != 3 or images.shape[1:] != (28, 28):
            raise ValueError(f"{source}: expected images of shape [N, 28, 28], got {images.shape}")
        if labels.ndim != 1 or len(labels) != len(images):
            raise ValueError(
                f"{source}: expected {len(images)} labels (one per image), got shape {labels.shape}"
            )
        # Read-only views (the caller's arrays keep their flags): items are copies, and the
        # `images`/`labels` properties must not let anyone alter the backing store.
        self._images = images.view()
        self._labels = labels.astype(np.int64, copy=False).view()
        self._images.flags.writeable = False
        self._labels.flags.writeable = False

    @property
    def images(self) -> np.ndarray:
        """All images, read-only `[N, 28, 28]` (uint8 for MNIST, float32 for digits)."""
        return self._images

    @property
    def labels(self) -> np.ndarray:
        """All labels, read-only int64 `[N]`."""
        return self._labels

    def get(self, index: int) -> MnistItem | None:
        index = check_index(index)
        if index >= len(self._labels):
            return None
        # np.array copies, so a caller normalizing the image in place cannot corrupt the dataset.
        return MnistItem(np.array(self._images[index], dtype=np.float32), int(self._labels[index]))

    def __len__(self) -> int:
        return len(self._labels)
