"""Vision datasets (Burn's `burn_dataset::vision`).

Example:
    >>> from burn_dataset.vision import DigitsDataset
    >>> item = DigitsDataset.test().get(0)
    >>> item.image.shape, item.image.dtype.name
    ((28, 28), 'float32')
"""

from burn_dataset.vision._cifar import (
    CIFAR10_URL,
    CIFAR100_URL,
    CifarDataset,
    CifarSplit,
    CifarType,
)
from burn_dataset.vision._digits import DigitsDataset, upscale_digits
from burn_dataset.vision._download import DownloadError, download_file
from burn_dataset.vision._idx import parse_idx, read_idx
from burn_dataset.vision._image_folder import (
    SUPPORTED_EXTENSIONS,
    ImageDatasetItem,
    ImageFolderDataset,
    Label,
    MultiLabel,
    SegmentationMask,
)
from burn_dataset.vision._items import MnistItem
from burn_dataset.vision._mnist import MNIST_MD5, MNIST_URL, MnistDataset

__all__ = [
    "CIFAR10_URL",
    "CIFAR100_URL",
    "CifarDataset",
    "CifarSplit",
    "CifarType",
    "MultiLabel",
    "SegmentationMask",
    "MNIST_MD5",
    "MNIST_URL",
    "SUPPORTED_EXTENSIONS",
    "DigitsDataset",
    "DownloadError",
    "download_file",
    "ImageDatasetItem",
    "ImageFolderDataset",
    "Label",
    "MnistDataset",
    "MnistItem",
    "parse_idx",
    "read_idx",
    "upscale_digits",
]
