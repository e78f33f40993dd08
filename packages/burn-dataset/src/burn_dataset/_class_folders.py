"""Class-folder datasets (`root/<class>/<file>`), shared by `ImageFolderDataset` and
`TextFolderDataset`: Burn's three constructors (`ClassFolderConstructors`), walking the folders,
and turning `(path, class name)` pairs into `(path, label index)` pairs."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Self


def walk_class_folders(
    root: str | os.PathLike[str], extensions: Iterable[str], kind: str, noun: str
) -> tuple[list[tuple[str, int]], list[str]]:
    """`(items, classes)`: every file under `root/<class>/` (recursively, sorted) whose extension
    is in `extensions`, labelled with its class folder's index among the sorted class names.

    `kind` ("image", "text") and `noun` ("image", "file") name what is missing in the errors:
    a root that is not a directory (`FileNotFoundError`), no extensions or no matching file
    (`ValueError`)."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"{kind} folder root is not a directory: {root}")
    exts = {e.lower().lstrip(".") for e in extensions}
    if not exts:
        raise ValueError("extensions must not be empty")
    classes = sorted(p.name for p in root.iterdir() if p.is_dir())
    items = [
        (str(path), label)
        for label, name in enumerate(classes)
        for path in sorted((root / name).rglob("*"))
        if path.is_file() and path.suffix.lower().lstrip(".") in exts
    ]
    if not items:
        raise ValueError(
            f"no {noun}s with extensions {sorted(exts)} found in class folders under {root} "
            f"(expected root/<class>/<{noun}>; class folders found: {classes})"
        )
    return items, classes


def class_index(classes: Sequence[str]) -> dict[str, int]:
    """Class name -> label index; the names must be unique (`ValueError` otherwise)."""
    classes = list(classes)
    if len(set(classes)) != len(classes):
        raise ValueError(f"class names must be unique, got {classes}")
    return {name: i for i, name in enumerate(classes)}


def label_items(
    items: Iterable[tuple[str | os.PathLike[str], str]],
    classes: Sequence[str],
    check: Callable[[str | os.PathLike[str]], None] | None = None,
) -> tuple[list[tuple[str, int]], list[str]]:
    """`(pairs, classes)`: explicit `(path, class name)` items as `(path, index into classes)`;
    `check(path)`, when given, refuses a path (by raising). Class names must be unique and each
    item's name one of them (`ValueError` naming the path)."""
    classes = list(classes)
    index = class_index(classes)
    pairs = []
    for path, name in items:
        if name not in index:
            raise ValueError(f"{path}: class {name!r} is not one of {classes}")
        if check is not None:
            check(path)
        pairs.append((str(path), index[name]))
    return pairs, classes


class ClassFolderConstructors:
    """Burn's `new_classification*` constructors of a dataset made from `(path, label)` items and
    class names (`cls(items, classes)`). A dataset sets `FOLDER_KIND` and `FOLDER_NOUN` (what its
    errors call the folder and a file), `DEFAULT_EXTENSIONS`, and may override
    `check_item_path`."""

    FOLDER_KIND = "file"
    FOLDER_NOUN = "file"
    DEFAULT_EXTENSIONS: tuple[str, ...] = ()

    @staticmethod
    def check_item_path(path: str | os.PathLike[str]) -> None:
        """Refuse (by raising `ValueError`) an explicit item's path; default: accept every one."""

    @classmethod
    def new_classification(cls, root: str | os.PathLike[str]) -> Self:
        """Every file under `root/<class>/` with one of the dataset's supported extensions
        (`DEFAULT_EXTENSIONS`); classes are the sorted folder names."""
        return cls.new_classification_with(root, cls.DEFAULT_EXTENSIONS)

    @classmethod
    def new_classification_with(
        cls, root: str | os.PathLike[str], extensions: Iterable[str]
    ) -> Self:
        """Like `new_classification`, keeping files whose extension is in `extensions`."""
        return cls(*walk_class_folders(root, extensions, cls.FOLDER_KIND, cls.FOLDER_NOUN))

    @classmethod
    def new_classification_with_items(
        cls, items: Iterable[tuple[str | os.PathLike[str], str]], classes: Sequence[str]
    ) -> Self:
        """Explicit `(path, class name)` pairs; labels are indices into `classes`."""
        return cls(*label_items(items, classes, cls.check_item_path))
