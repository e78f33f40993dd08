"""`ImageFolderDataset`: images with a class label (from a `root/<class>/<image>` folder tree or
explicit items), several labels, or a segmentation mask."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from burn_dataset._base import Dataset, check_index
from burn_dataset._class_folders import ClassFolderConstructors, class_index
from burn_dataset._errors import DatasetError

SUPPORTED_EXTENSIONS = ("bmp", "gif", "jpeg", "jpg", "png", "tif", "tiff", "webp")


def _require_pillow() -> Any:
    try:
        from PIL import Image
    except ImportError as err:
        raise ImportError(
            "ImageFolderDataset needs Pillow to decode images; install it with "
            "pip install 'burn-dataset[vision]'"
        ) from err
    return Image


@dataclass(frozen=True)
class Label:
    """A classification annotation: the class index (Burn's `Annotation::Label`).

    Example:
        >>> Label(3).value
        3
    """

    value: int


@dataclass(frozen=True)
class MultiLabel:
    """Several class indices for one image (Burn's `Annotation::MultiLabel`), in the order given.

    Example:
        >>> MultiLabel((0, 2)).values
        (0, 2)
    """

    values: tuple[int, ...]


@dataclass(frozen=True, eq=False)
class SegmentationMask:
    """Per-pixel class indices `[H, W]` int64 (Burn's `Annotation::SegmentationMask`, whose
    `mask` is the same values flattened row-major: `mask.ravel()`).

    Example:
        >>> import numpy as np
        >>> SegmentationMask(np.zeros((2, 3), np.int64)).mask.shape
        (2, 3)
    """

    mask: np.ndarray

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SegmentationMask) and np.array_equal(self.mask, other.mask)


@dataclass(frozen=True)
class _MaskPath:
    path: str


def _decode_mask(path: str, image_shape: tuple[int, ...], image_path: str) -> np.ndarray:
    """Class indices of a mask image: gray 8/16-bit values, or the red channel of an RGB mask
    (as Burn); its size must match the image's."""
    Image = _require_pillow()
    try:
        with Image.open(path) as img:
            mode = img.mode
            if mode == "L" or mode.startswith("I;16") or mode == "I":
                mask = np.asarray(img).astype(np.int64)
            elif mode in ("RGB", "RGBA"):
                mask = np.asarray(img)[:, :, 0].astype(np.int64)
            else:
                raise DatasetError(
                    f"{path}: mask image mode {mode} is not supported (use 8/16-bit gray or RGB)"
                )
    except FileNotFoundError:
        raise
    except (OSError, ValueError, SyntaxError) as err:
        if isinstance(err, DatasetError):
            raise
        raise DatasetError(f"{path}: cannot decode the mask ({type(err).__name__}: {err})") from None
    if mask.shape != tuple(image_shape[:2]):
        raise DatasetError(
            f"{path}: mask is {mask.shape[0]}x{mask.shape[1]} (HxW) but its image {image_path} "
            f"is {image_shape[0]}x{image_shape[1]}"
        )
    return mask


@dataclass
class ImageDatasetItem:
    """A decoded image `[H, W, C]` (uint8, or uint16/float32 for such files), its path, label.

    Example:
        >>> import numpy as np
        >>> item = ImageDatasetItem(np.zeros((2, 2, 3), np.uint8), "cat/a.png", Label(0))
        >>> item.label, item.image.shape
        (0, (2, 2, 3))
    """

    image: np.ndarray
    image_path: str
    annotation: Label | MultiLabel | SegmentationMask

    @property
    def label(self) -> int:
        """Shortcut for `annotation.value` of a classification item."""
        if not isinstance(self.annotation, Label):
            raise TypeError(
                f"{self.image_path}: label is for classification items; this one's annotation "
                f"is a {type(self.annotation).__name__}"
            )
        return self.annotation.value


def _decode(path: str) -> np.ndarray:
    """The image's pixels, [h, w, c]; a file that does not decode is a DatasetError naming it."""
    Image = _require_pillow()
    try:
        return _pixels(Image, path)
    except FileNotFoundError:
        raise
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as err:
        # Pillow reports truncated or corrupt files as OSError/SyntaxError without the path.
        raise DatasetError(
            f"{path}: cannot decode the image ({type(err).__name__}: {err})"
        ) from None


def _pixels(Image, path: str) -> np.ndarray:
    with Image.open(path) as img:
        # Keep what the file holds where numpy has a matching dtype; palette, CMYK, 1-bit and
        # other modes become RGB, which is what a classifier expects.
        if img.mode in ("L", "LA", "RGB", "RGBA", "F"):
            array = np.asarray(img)
        elif img.mode.startswith("I;16"):
            array = np.asarray(img).astype(np.uint16)
        elif img.mode == "P" and "transparency" in img.info:
            array = np.asarray(img.convert("RGBA"))
        else:
            array = np.asarray(img.convert("RGB"))
    if array.ndim == 2:
        array = array[:, :, None]
    return np.ascontiguousarray(array)


class ImageFolderDataset(ClassFolderConstructors, Dataset[ImageDatasetItem]):
    """Images under `root/<class name>/...`, labelled by their class folder.

    Class names are the sorted names of the folders directly under `root`; the label is the
    class's index in that list (`classes`). Files are found once, at construction (recursively
    inside each class folder, sorted by path); each image is decoded only when fetched.

    Example:
        >>> ds = ImageFolderDataset.new_classification("data/flowers")  # doctest: +SKIP
        >>> ds.classes, ds.get(0).image.shape, ds.get(0).label  # doctest: +SKIP
        (['daisy', 'rose'], (64, 64, 3), 0)
    """

    FOLDER_KIND = FOLDER_NOUN = "image"  # errors: "image folder root ...", "no images ..."
    DEFAULT_EXTENSIONS = SUPPORTED_EXTENSIONS

    def __init__(self, items: Sequence[tuple[str, Any]], classes: Sequence[str]) -> None:
        _require_pillow()  # fail at construction, not in the middle of an epoch
        # an annotation is a class index, a MultiLabel, or a _MaskPath decoded on `get`
        self._items = [
            (str(path), ann if isinstance(ann, (MultiLabel, _MaskPath)) else int(ann))
            for path, ann in items
        ]
        self._classes = list(classes)

    @property
    def classes(self) -> list[str]:
        """Class names; a label is an index into this list."""
        return list(self._classes)

    @classmethod
    def new_multilabel_classification_with_items(
        cls, items: Iterable[tuple[str | os.PathLike[str], Sequence[str]]], classes: Sequence[str]
    ) -> ImageFolderDataset:
        """`(image path, [class names])` pairs: each item's annotation is a `MultiLabel` of the
        names' indices into `classes`, in the order given (Burn's
        `new_multilabel_classification_with_items`)."""
        index = class_index(classes)
        pairs = []
        for path, names in items:
            if isinstance(names, str):
                raise TypeError(f"{path}: expected a list of class names, got the string {names!r}")
            unknown = [n for n in names if n not in index]
            if unknown:
                raise ValueError(f"{path}: classes {unknown} are not in {list(classes)}")
            pairs.append((_checked(path), MultiLabel(tuple(index[n] for n in names))))
        return cls(pairs, list(classes))

    @classmethod
    def new_segmentation_with_items(
        cls,
        items: Iterable[tuple[str | os.PathLike[str], str | os.PathLike[str]]],
        classes: Sequence[str],
    ) -> ImageFolderDataset:
        """`(image path, mask path)` pairs: each item's annotation is a `SegmentationMask` read
        from the mask image (gray values, or the red channel of RGB, are class indices;
        `classes` names them). Burn's `new_segmentation_with_items`."""
        class_index(classes)
        pairs = []
        for image, mask in items:
            if not Path(mask).is_file():
                raise FileNotFoundError(f"segmentation mask not found: {mask} (for {image})")
            pairs.append((_checked(image), _MaskPath(str(mask))))
        return cls(pairs, list(classes))

    def get(self, index: int) -> ImageDatasetItem | None:
        index = check_index(index)
        if index >= len(self._items):
            return None
        path, ann = self._items[index]
        image = _decode(path)
        if isinstance(ann, _MaskPath):
            return ImageDatasetItem(
                image, path, SegmentationMask(_decode_mask(ann.path, image.shape, path))
            )
        return ImageDatasetItem(image, path, ann if isinstance(ann, MultiLabel) else Label(ann))

    def __len__(self) -> int:
        return len(self._items)


def _checked(path: str | os.PathLike[str]) -> str:
    """The image path, its extension checked against `SUPPORTED_EXTENSIONS` (as Burn)."""
    ext = Path(path).suffix.lower().lstrip(".")
    if ext not in SUPPORTED_EXTENSIONS:
        raise ValueError(f"{path}: extension {ext!r} is not one of {list(SUPPORTED_EXTENSIONS)}")
    return str(path)
