"""`SqliteDatasetWriter`: fill an SQLite dataset file, split by split, item by item."""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

from burn_dataset._codec import pack
from burn_dataset._items import item_to_row
from burn_dataset._sqlite_checksum import CRC_COLUMN, layout_bytes, row_crc
from burn_dataset._sqlite_schema import (
    BLOB,
    ENCODINGS,
    STORAGES,
    check_split,
    encode_value,
    encoding_of,
    ensure_meta_table,
    quote,
    write_meta,
)


class SqliteDatasetWriter:
    """Write items into an SQLite dataset file; thread-safe.

    Items go to a temporary file next to `db_file`, renamed into place by `set_completed()`, so a
    reader never sees a half-written database (Burn does the same). Used as a context manager,
    the writer completes on success and deletes the temporary file on error.

    Args:
        db_file: the database file to create.
        overwrite: replace an existing file; otherwise an existing file is an error.
        storage: `"blob"` (default) stores each item as one msgpack blob, which handles any
            nesting and numpy arrays; `"columns"` stores each field of a dict/dataclass item in
            its own typed column (queryable with plain SQL).

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "d.db"
        >>> with SqliteDatasetWriter(path) as writer:
        ...     writer.write("train", {"text": "hello", "label": 1})
        0
        >>> from burn_dataset import SqliteDataset
        >>> SqliteDataset.from_db_file(path, "train").get(0)
        {'text': 'hello', 'label': 1}
    """

    def __init__(
        self, db_file: str | os.PathLike[str], overwrite: bool = False, *, storage: str = BLOB
    ) -> None:
        if storage not in STORAGES:
            raise ValueError(f"storage must be one of {STORAGES}, got {storage!r}")
        self._db_file = Path(db_file)
        if self._db_file.exists() and not overwrite:
            raise FileExistsError(
                f"dataset file {self._db_file} already exists; pass overwrite=True to replace it"
            )
        # The database is built in a private folder beside the target: `mkdtemp` makes it with a
        # random name, atomically and mode 0700, so no other user can plant a file or symlink
        # at the name SQLite then opens (it has no O_EXCL), and two processes importing the same
        # dataset never share one; whichever completes last atomically replaces the other's.
        # (burn-dataset does not depend on burn-record, whose `atomic_write` streams one file
        # through a Python file object; SQLite needs a path to open itself.)
        self._db_file.parent.mkdir(parents=True, exist_ok=True)
        self._tmp_dir = Path(
            tempfile.mkdtemp(
                prefix=f".{self._db_file.name}.", suffix=".tmp", dir=self._db_file.parent
            )
        )
        self._tmp_file = self._tmp_dir / "dataset.db"
        self._storage = storage
        self._lock = threading.Lock()
        # check_same_thread=False: several producer threads may share this writer; the lock
        # serializes them, which is what SQLite needs for a single connection anyway.
        self._conn: sqlite3.Connection | None = None
        try:
            self._conn = sqlite3.connect(
                self._tmp_file, check_same_thread=False, isolation_level=None
            )
            # A fresh temp file: nothing to roll back to; durability comes from the final rename.
            self._conn.execute("PRAGMA journal_mode = OFF")
            self._conn.execute("PRAGMA synchronous = OFF")
            self._conn.execute("BEGIN")
            ensure_meta_table(self._conn)
        except BaseException:
            if self._conn is not None:
                self._conn.close()
            self._remove_tmp_dir()
            raise
        self._splits: dict[str, dict[str, str]] = {}
        self._layouts: dict[str, bytes] = {}
        self._counts: dict[str, int] = {}

    @property
    def db_file(self) -> Path:
        """The final database path (valid once completed)."""
        return self._db_file

    def _create_split(self, split: str, item: Any) -> dict[str, str]:
        assert self._conn is not None
        if self._storage == BLOB:
            columns = {"item": "msgpack"}
        else:
            row = item_to_row(item)
            if not row:
                raise ValueError("an item stored in columns needs at least one field")
            if "row_id" in row:
                raise ValueError("'row_id' is reserved for the row index; rename that field")
            columns = {name: encoding_of(value) for name, value in row.items()}
        return self._add_table(split, columns)

    def declare_split(self, split: str, columns: dict[str, str]) -> None:
        """Create `split` with explicit column encodings instead of inferring them.

        Only for `storage="columns"`. Encodings: "int", "float", "str", "bytes", "bool",
        "msgpack" (anything else, e.g. arrays or lists). Useful when the first item has None in a
        column whose type is known from a schema.
        """
        check_split(split)
        if self._storage != "columns":
            raise ValueError("declare_split only applies to storage='columns'")
        for name, encoding in columns.items():
            if encoding not in ENCODINGS:
                raise ValueError(
                    f"column {name!r}: encoding must be one of {sorted(ENCODINGS)}, "
                    f"got {encoding!r}"
                )
        if not columns or "row_id" in columns:
            raise ValueError("columns must be non-empty and must not contain 'row_id'")
        with self._lock:
            if self._conn is None:
                raise RuntimeError("the writer is completed or closed; create a new one")
            if split in self._splits:
                raise ValueError(f"split {split!r} already exists in this writer")
            self._add_table(split, dict(columns))

    def _add_table(self, split: str, columns: dict[str, str]) -> dict[str, str]:
        assert self._conn is not None
        if CRC_COLUMN in columns:
            raise ValueError(f"{CRC_COLUMN!r} is reserved for the row checksum; rename that field")
        defs = ", ".join(f"{quote(c)} {ENCODINGS[e]}" for c, e in columns.items())
        self._conn.execute(
            f"CREATE TABLE {quote(split)} (row_id INTEGER PRIMARY KEY, {defs}, "
            f"{quote(CRC_COLUMN)} INTEGER NOT NULL)"
        )
        text = write_meta(self._conn, split, self._storage, columns)
        self._layouts[split] = layout_bytes(self._storage, text)
        self._splits[split] = columns
        self._counts[split] = 0
        return columns

    def _encode(self, split: str, item: Any, columns: dict[str, str]) -> list[Any]:
        if self._storage == BLOB:
            return [pack(item)]
        row = item_to_row(item)
        if row.keys() != columns.keys():
            raise ValueError(
                f"item fields {sorted(row)} differ from split {split!r}'s columns "
                f"{sorted(columns)} (set by its first item)"
            )
        return [encode_value(row[c], e, c) for c, e in columns.items()]

    def write(self, split: str, item: Any) -> int:
        """Append `item` to `split` (creating its table on first use); return its index."""
        check_split(split)
        with self._lock:
            if self._conn is None:
                raise RuntimeError("the writer is completed or closed; create a new one")
            columns = self._splits.get(split) or self._create_split(split, item)
            values = self._encode(split, item, columns)
            index = self._counts[split]
            crc = row_crc(self._layouts[split], index + 1, values)
            placeholders = ", ".join("?" * (len(values) + 2))
            self._conn.execute(
                f"INSERT INTO {quote(split)} VALUES ({placeholders})", [index + 1, *values, crc]
            )
            self._counts[split] = index + 1
            return index

    def write_many(self, split: str, items: Iterable[Any]) -> int:
        """Append every item of `items` to `split`; return how many were written."""
        count = 0
        for item in items:
            self.write(split, item)
            count += 1
        return count

    def set_completed(self) -> Path:
        """Commit and move the file into place; the writer cannot be used afterwards."""
        with self._lock:
            if self._conn is None:
                raise RuntimeError("the writer is already completed or closed")
            self._conn.execute("COMMIT")
            self._conn.close()
            self._conn = None
            os.replace(self._tmp_file, self._db_file)
            self._remove_tmp_dir()
        return self._db_file

    def abort(self) -> None:
        """Discard everything written so far (deletes the temporary file)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._remove_tmp_dir()

    def _remove_tmp_dir(self) -> None:
        # What SQLite may leave beside the database (a journal) goes with the folder.
        shutil.rmtree(self._tmp_dir, ignore_errors=True)

    def __enter__(self) -> SqliteDatasetWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            if self._conn is not None:
                self.set_completed()
        else:
            self.abort()
