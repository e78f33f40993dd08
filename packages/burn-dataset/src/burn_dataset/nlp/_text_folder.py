"""`TextFolderDataset`: text classification from a `root/<class>/<file>.txt` folder tree."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from burn_dataset._base import Dataset, check_index
from burn_dataset._class_folders import ClassFolderConstructors

SUPPORTED_TEXT_EXTENSIONS = ("txt",)


@dataclass
class TextData:
    """A text and the file it came from (Burn's `TextData`)."""

    text: str
    text_path: str


@dataclass
class TextDatasetItem:
    """A text and its class index (Burn's `TextDatasetItem`)."""

    text: TextData
    label: int


def read_text(path: str | os.PathLike[str]) -> str:
    """A text file's content, decoded as Burn does: UTF-8 (with or without BOM), UTF-16 with a
    BOM, GB18030, GBK, else UTF-8 with replacement characters."""
    data = Path(path).read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        try:
            return data[3:].decode("utf-8")
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    for bom, codec in ((b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if data.startswith(bom):
            try:
                return data[2:].decode(codec)
            except UnicodeDecodeError:
                pass
    for codec in ("gb18030", "gbk"):
        try:
            return data.decode(codec)
        except UnicodeDecodeError:
            pass
    return data.decode("utf-8", "replace")


class TextFolderDataset(ClassFolderConstructors, Dataset[TextDatasetItem]):
    """Texts labelled by their class folder (Burn's `TextFolderDataset`): classes are the sorted
    folder names under `root`, files are found once (recursively, sorted) and read on `get`.

    Example:
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> (root / "pos").mkdir(); _ = (root / "pos" / "a.txt").write_text("good")
        >>> ds = TextFolderDataset.new_classification(root)
        >>> ds.get(0).text.text, ds.get(0).label, ds.classes
        ('good', 0, ['pos'])
    """

    FOLDER_KIND = "text"  # errors: "text folder root ...", "no files ..."
    DEFAULT_EXTENSIONS = SUPPORTED_TEXT_EXTENSIONS

    def __init__(self, items: Sequence[tuple[str, int]], classes: Sequence[str]) -> None:
        self._items = [(str(p), int(label)) for p, label in items]
        self.classes = list(classes)

    @staticmethod
    def check_item_path(path: str | os.PathLike[str]) -> None:
        """Only `.txt` files: another extension raises `ValueError` naming the path."""
        ext = Path(path).suffix.lower().lstrip(".")
        if ext not in SUPPORTED_TEXT_EXTENSIONS:
            raise ValueError(f"{path}: extension {ext!r} is not supported (use .txt)")

    def get(self, index: int) -> TextDatasetItem | None:
        index = check_index(index)
        if index >= len(self._items):
            return None
        path, label = self._items[index]
        return TextDatasetItem(TextData(read_text(path), path), label)

    def __len__(self) -> int:
        return len(self._items)
