"""`CifarDataset`: CIFAR-10 and CIFAR-100 from their python-pickle batches.

The batches are Python pickles of dicts holding a numpy array; they are read with an unpickler
that admits only what such a file contains (numpy's array reconstruction and byte decoding):
any other global in the file is refused, so a crafted batch cannot run code.
"""

from __future__ import annotations

import enum
import io
import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np

from burn_dataset._base import Dataset, check_index
from burn_dataset._cache import default_cache_dir
from burn_dataset._errors import DatasetError
from burn_dataset.vision._image_folder import ImageDatasetItem, Label

CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
CIFAR100_URL = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
_MD5 = {
    "cifar-10-python.tar.gz": "c58f30108f718f92721af3b95e74349a",
    "cifar-100-python.tar.gz": "eb9058c3a382ffc7106e4002c42a8d85",
}
_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("_codecs", "encode"),  # bytes pickled at protocol 2
}


class CifarType(enum.Enum):
    """Which CIFAR (Burn's `CifarType`): 10 classes or 100.

    Example:
        >>> CifarType.Cifar100.value
        'cifar100'
    """

    Cifar10 = "cifar10"
    Cifar100 = "cifar100"


# (top folder, archive, url, train batches, test batches, meta file, meta key, label key)
_LAYOUT = {
    CifarType.Cifar10: (
        "cifar-10-batches-py", "cifar-10-python.tar.gz", CIFAR10_URL,
        [f"data_batch_{i}" for i in range(1, 6)], ["test_batch"], "batches.meta",
        "label_names", "labels",
    ),
    CifarType.Cifar100: (
        "cifar-100-python", "cifar-100-python.tar.gz", CIFAR100_URL,
        ["train"], ["test"], "meta", "fine_label_names", "fine_labels",
    ),
}  # fmt: skip


class _BatchUnpickler(pickle.Unpickler):
    def __init__(self, file: Any, path: Path) -> None:
        super().__init__(file, encoding="bytes")
        self.path = path

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED:
            raise DatasetError(
                f"{self.path}: refusing to load global {module}.{name} (a CIFAR batch holds only "
                "numpy arrays, lists and bytes)"
            )
        return super().find_class(module, name)


def _load(path: Path) -> dict[str, Any]:
    """A batch file as a dict with str keys."""
    if not path.is_file():
        raise FileNotFoundError(f"CIFAR batch file not found: {path}")
    try:
        data = _BatchUnpickler(io.BytesIO(path.read_bytes()), path).load()
    except DatasetError:
        raise
    except Exception as err:  # noqa: BLE001 - any unpickling failure is a damaged file
        raise DatasetError(f"{path}: not a CIFAR python batch ({type(err).__name__}: {err})")
    if not isinstance(data, dict):
        raise DatasetError(f"{path}: expected a pickled dict, got {type(data).__name__}")
    return {k.decode() if isinstance(k, bytes) else str(k): v for k, v in data.items()}


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


class CifarSplit(Dataset[ImageDatasetItem]):
    """The images of one CIFAR split: `ImageDatasetItem(image [32, 32, 3] uint8, image_path,
    Label(class))`, with `classes` the class names (CIFAR-100: the 100 fine classes)."""

    def __init__(self, images: np.ndarray, labels: np.ndarray, names: list[str], classes: list[str]):
        self._images, self._labels, self._names = images, labels, names
        self.classes = classes

    def get(self, index: int) -> ImageDatasetItem | None:
        index = check_index(index)
        if index >= len(self._labels):
            return None
        image = np.array(self._images[index])  # a copy: items never alias the store
        return ImageDatasetItem(image, self._names[index], Label(int(self._labels[index])))

    def __len__(self) -> int:
        return len(self._labels)


class CifarDataset:
    """CIFAR-10 (10 classes) or CIFAR-100 (100 fine classes): 50,000 train and 10,000 test
    images of 32x32 RGB (Burn's `CifarDataset`).

    Args:
        cifar_type: `CifarType.Cifar10` or `CifarType.Cifar100`.
        root: a folder holding the extracted batches (`cifar-10-batches-py/` or
            `cifar-100-python/`, or that folder itself); default: the dataset cache, where the
            official archive is downloaded (MD5 checked) and extracted on first use. Offline, a
            `DownloadError` names the URL.

    Example:
        >>> ds = CifarDataset(CifarType.Cifar10)  # doctest: +SKIP
        >>> train = ds.train(); train.get(0).image.shape, train.classes[:2]  # doctest: +SKIP
        ((32, 32, 3), ['airplane', 'automobile'])
    """

    def __init__(
        self,
        cifar_type: CifarType = CifarType.Cifar10,
        root: str | os.PathLike[str] | None = None,
        base_url: str | None = None,
    ) -> None:
        self.cifar_type = CifarType(cifar_type)
        folder, archive, url, *_ = _LAYOUT[self.cifar_type]
        if root is None:
            # imported here: _archive imports this package's _download (a cycle at import time)
            from burn_dataset._archive import ensure_extracted

            cache = default_cache_dir()
            cache.mkdir(parents=True, exist_ok=True)
            url = (base_url.rstrip("/") + "/" + archive) if base_url else url
            self.directory = ensure_extracted(
                cache, folder, url, archive, _MD5[archive], f"CIFAR ({self.cifar_type.name})"
            )
        else:
            root = Path(root)
            self.directory = root / folder if (root / folder).is_dir() else root
        meta_file, meta_key = _LAYOUT[self.cifar_type][5:7]
        meta = _load(self.directory / meta_file)
        if meta_key not in meta:
            raise DatasetError(f"{self.directory / meta_file}: no {meta_key!r} entry")
        self.classes = [_text(n) for n in meta[meta_key]]

    @classmethod
    def new(cls, cifar_type: CifarType, root: Any = None) -> CifarDataset:
        return cls(cifar_type, root)

    def train(self) -> CifarSplit:
        """The 50,000 training images."""
        return self._split(_LAYOUT[self.cifar_type][3])

    def test(self) -> CifarSplit:
        """The 10,000 test images."""
        return self._split(_LAYOUT[self.cifar_type][4])

    def _split(self, files: list[str]) -> CifarSplit:
        label_key = _LAYOUT[self.cifar_type][7]
        images, labels, names = [], [], []
        for name in files:
            path = self.directory / name
            batch = _load(path)
            for key in ("data", label_key):
                if key not in batch:
                    raise DatasetError(f"{path}: no {key!r} entry (found {sorted(batch)})")
            data = np.asarray(batch["data"])
            batch_labels = np.asarray(batch[label_key], dtype=np.int64)
            if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3072:
                raise DatasetError(
                    f"{path}: expected data uint8 [N, 3072], got {data.dtype} {list(data.shape)}"
                )
            if batch_labels.shape != (len(data),):
                raise DatasetError(
                    f"{path}: {len(data)} images but {batch_labels.shape[0]} labels"
                )
            bad = (batch_labels < 0) | (batch_labels >= len(self.classes))
            if bad.any():
                i = int(np.argmax(bad))
                raise DatasetError(
                    f"{path}: image {i} has label {int(batch_labels[i])}, outside 0.."
                    f"{len(self.classes) - 1}"
                )
            # rows are 1024 red, 1024 green, 1024 blue values, each a 32x32 row-major plane
            images.append(data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
            labels.append(batch_labels)
            files_ = batch.get("filenames")
            names += (
                [f"{name}/{_text(f)}" for f in files_]
                if files_ is not None and len(files_) == len(data)
                else [f"{name}#{i}" for i in range(len(data))]
            )
        images_all = np.ascontiguousarray(np.concatenate(images))
        images_all.flags.writeable = False
        return CifarSplit(images_all, np.concatenate(labels), names, list(self.classes))
