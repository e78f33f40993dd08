"""`InMemDataset`: items held in a Python list."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable, Sequence
from typing import Any

from burn_dataset._base import Dataset, I, check_dataset, check_index, dataset_len
from burn_dataset._items import row_converter


class InMemDataset(Dataset[I]):
    """Dataset over a list of items kept in memory; well-suited to small datasets.

    Args:
        items: any iterable of items; it is copied into a list.

    Example:
        >>> ds = InMemDataset([{"x": 1}, {"x": 2}])
        >>> len(ds), ds.get(1), ds.get(2)
        (2, {'x': 2}, None)
    """

    def __init__(self, items: Iterable[I]) -> None:
        if isinstance(items, (str, bytes, dict)):
            raise TypeError(
                f"InMemDataset expects an iterable of items (e.g. a list), got "
                f"{type(items).__name__}"
            )
        self._items: list[I] = list(items)

    @classmethod
    def new(cls, items: Iterable[I]) -> InMemDataset[I]:
        """Burn's constructor name; same as `InMemDataset(items)`."""
        return cls(items)

    def get(self, index: int) -> I | None:
        index = check_index(index)
        return self._items[index] if index < len(self._items) else None

    def __len__(self) -> int:
        return len(self._items)

    def get_many(self, indices: Sequence[int]) -> list[I]:
        items, n = self._items, len(self._items)
        if isinstance(indices, list) and indices and set(map(type, indices)) == {int}:
            # The data loader's case (a list of plain ints): validate the whole batch at once
            # instead of item by item, then index in C. Any bad index takes the checked path.
            if min(indices) >= 0 and max(indices) < n:
                return list(map(items.__getitem__, indices))
        out = []
        for index in indices:
            index = check_index(index)
            if index >= n:
                raise IndexError(f"index {index} out of range for dataset of length {n}")
            out.append(items[index])
        return out

    @classmethod
    def from_dataset(cls, dataset: Any) -> InMemDataset[Any]:
        """Materialize every item of another dataset into memory."""
        check_dataset(dataset)
        return cls(dataset.get(i) for i in range(dataset_len(dataset)))

    @classmethod
    def from_json_rows(cls, path: str | os.PathLike[str], item_type: Any = None) -> InMemDataset:
        """Load a JSON-lines file: one JSON value per non-empty line.

        Args:
            path: the file to read.
            item_type: None to keep each parsed value, or a dataclass/callable that receives each
                JSON object's keys as keyword arguments.

        Example:
            >>> import tempfile, pathlib
            >>> p = pathlib.Path(tempfile.mkdtemp()) / "rows.jsonl"
            >>> _ = p.write_text('{"a": 1}\\n{"a": 2}\\n')
            >>> InMemDataset.from_json_rows(p).get(1)
            {'a': 2}
        """
        convert = row_converter(item_type) if item_type is not None else None
        items = []
        with open(path, encoding="utf-8") as f:
            for line_no, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except json.JSONDecodeError as err:
                    raise ValueError(f"{path}:{line_no}: invalid JSON ({err.msg})") from None
                if convert is not None:
                    if not isinstance(value, dict):
                        raise ValueError(
                            f"{path}:{line_no}: expected a JSON object for item_type "
                            f"{getattr(item_type, '__name__', item_type)}, got "
                            f"{type(value).__name__}"
                        )
                    try:
                        value = convert(value)
                    except (TypeError, ValueError) as err:
                        raise ValueError(f"{path}:{line_no}: {err}") from None
                items.append(value)
        return cls(items)

    @classmethod
    def from_csv(
        cls,
        path: str | os.PathLike[str],
        item_type: Any = None,
        *,
        delimiter: str = ",",
        has_header: bool = True,
        fieldnames: Sequence[str] | None = None,
    ) -> InMemDataset:
        """Load a CSV (or TSV, with `delimiter="\\t"`) file, one item per row.

        Args:
            path: the file to read.
            item_type: None for `dict[str, str]` rows; a dataclass converts each column by its
                field annotation (int, float, bool, str, Optional[...]); any other callable
                receives the row as keyword arguments.
            delimiter: the one-character field separator.
            has_header: whether the first row names the columns.
            fieldnames: column names when the file has no header (defaults to the dataclass's
                field order).

        Example:
            >>> import dataclasses, tempfile, pathlib
            >>> @dataclasses.dataclass
            ... class Row:
            ...     age: int
            ...     bmi: float
            >>> p = pathlib.Path(tempfile.mkdtemp()) / "d.csv"
            >>> _ = p.write_text("age,bmi\\n59,32.1\\n48,21.6\\n")
            >>> InMemDataset.from_csv(p, Row).get(0)
            Row(age=59, bmi=32.1)
        """
        if not isinstance(delimiter, str) or len(delimiter) != 1:
            raise ValueError(f"delimiter must be a single character, got {delimiter!r}")
        convert = row_converter(item_type)
        names: list[str] | None = list(fieldnames) if fieldnames is not None else None
        if names is None and not has_header:
            fields = getattr(item_type, "__dataclass_fields__", None)
            if fields is None:
                raise ValueError(
                    "a CSV without header needs fieldnames=[...] or a dataclass item_type"
                )
            names = list(fields)
        items = []
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.reader(f, delimiter=delimiter)
            if has_header:
                header = next(reader, None)
                if header is None:
                    return cls([])
                if names is None:
                    names = [h.strip() for h in header]
            assert names is not None
            for row in reader:
                if not row:
                    continue
                if len(row) != len(names):
                    raise ValueError(
                        f"{path}:{reader.line_num}: expected {len(names)} fields "
                        f"({', '.join(names)}), got {len(row)}"
                    )
                try:
                    items.append(convert(dict(zip(names, row, strict=True))))
                except (TypeError, ValueError) as err:
                    raise ValueError(f"{path}:{reader.line_num}: {err}") from None
        return cls(items)
