"""`MnistDataset`: the MNIST handwritten digits from the original IDX files."""

from __future__ import annotations

import os
from pathlib import Path

from burn_dataset._cache import default_cache_dir
from burn_dataset.vision._download import DownloadError, download_file
from burn_dataset.vision._idx import read_idx
from burn_dataset.vision._items import ArrayImageDataset

MNIST_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"
MNIST_URL_ENV = "BURN_MNIST_URL"
# The published MD5s of the four files (the same values torchvision and others check).
MNIST_MD5 = {
    "train-images-idx3-ubyte.gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
    "train-labels-idx1-ubyte.gz": "d53e105ee54ea40749a09fcbcd1e9432",
    "t10k-images-idx3-ubyte.gz": "9fb629c4189551a2d022fa330f9573f3",
    "t10k-labels-idx1-ubyte.gz": "ec29112dd5afa0611ce80d1b7f02629c",
}
_SPLIT_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}


def _find(cache_dir: Path, name: str) -> Path | None:
    """A cached copy of `name`: the .gz as downloaded, or an already-decompressed file."""
    for candidate in (cache_dir / name, cache_dir / name.removesuffix(".gz")):
        if candidate.is_file():
            return candidate
    return None


class MnistDataset(ArrayImageDataset):
    """MNIST: 60,000 training and 10,000 test images of handwritten digits.

    Items are `MnistItem(image: float32 [28, 28] in 0..255, label: int)`, as in Burn. The four
    IDX files are looked up in `cache_dir` (default `<default_cache_dir()>/mnist`, gzip or
    raw); missing ones are downloaded from `base_url` (default Burn's mirror, or `$BURN_MNIST_URL`)
    and checked against their published MD5. Offline, a `DownloadError` names the missing
    files and where to put them. For an offline stand-in with the same items, see
    `DigitsDataset`.

    Example:
        >>> train = MnistDataset.train()  # doctest: +SKIP
        >>> train.get(0).image.shape, len(train)  # doctest: +SKIP
        ((28, 28), 60000)
    """

    @classmethod
    def train(
        cls, cache_dir: str | os.PathLike[str] | None = None, base_url: str | None = None
    ) -> MnistDataset:
        """The 60,000-image training split."""
        return cls.new("train", cache_dir, base_url)

    @classmethod
    def test(
        cls, cache_dir: str | os.PathLike[str] | None = None, base_url: str | None = None
    ) -> MnistDataset:
        """The 10,000-image test split."""
        return cls.new("test", cache_dir, base_url)

    @classmethod
    def new(
        cls,
        split: str,
        cache_dir: str | os.PathLike[str] | None = None,
        base_url: str | None = None,
    ) -> MnistDataset:
        """Load `split` ("train" or "test"), downloading its files if they are not cached."""
        if split not in _SPLIT_FILES:
            raise ValueError(f"MNIST split must be 'train' or 'test', got {split!r}")
        root = Path(cache_dir) if cache_dir is not None else default_cache_dir() / "mnist"
        url = base_url or os.environ.get(MNIST_URL_ENV) or MNIST_URL
        if not url.endswith("/"):
            url += "/"
        names = _SPLIT_FILES[split]
        missing = [name for name in names if _find(root, name) is None]
        errors = []
        for name in missing:
            try:
                download_file(url + name, root / name, MNIST_MD5[name])
            except DownloadError as err:
                errors.append(str(err))
        if errors:
            still_missing = [name for name in names if _find(root, name) is None]
            raise DownloadError(
                f"MNIST {split} files {', '.join(still_missing)} are not in the cache directory "
                f"{root} and could not be downloaded from {url} (are you offline?).\n"
                + "\n".join(f"  - {e}" for e in errors)
                + f"\nDownload them by hand into {root} (gzip or decompressed IDX files), pass "
                "cache_dir=..., or set $BURN_MNIST_URL to a reachable mirror. To work offline "
                "without MNIST, use burn_dataset.vision.DigitsDataset, which ships with the "
                "package and yields the same MnistItem."
            )
        images_path, labels_path = (_find(root, name) for name in names)
        assert images_path is not None and labels_path is not None
        return cls.from_idx_files(images_path, labels_path)

    @classmethod
    def from_idx_files(
        cls, images: str | os.PathLike[str], labels: str | os.PathLike[str]
    ) -> MnistDataset:
        """Build the dataset from an images IDX file (`[N, 28, 28]` uint8) and a labels file.

        Example:
            >>> import numpy as np, tempfile, pathlib, struct
            >>> d = pathlib.Path(tempfile.mkdtemp())
            >>> _ = (d / "img").write_bytes(bytes([0, 0, 8, 3]) + struct.pack(">3I", 1, 28, 28)
            ...                               + bytes(784))
            >>> _ = (d / "lbl").write_bytes(bytes([0, 0, 8, 1]) + struct.pack(">I", 1) + b"\\x05")
            >>> MnistDataset.from_idx_files(d / "img", d / "lbl").get(0).label
            5
        """
        image_array, label_array = read_idx(images), read_idx(labels)
        if image_array.ndim != 3 or image_array.shape[1:] != (28, 28):
            raise ValueError(
                f"{images}: expected MNIST images of shape [N, 28, 28], got {image_array.shape}"
            )
        if label_array.ndim != 1 or len(label_array) != len(image_array):
            raise ValueError(
                f"{labels}: expected {len(image_array)} labels to match {images}, got shape "
                f"{label_array.shape}"
            )
        return cls(image_array, label_array, source=str(images))
