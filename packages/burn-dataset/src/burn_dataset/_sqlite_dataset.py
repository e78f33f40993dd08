"""`SqliteDataset`: one split of an SQLite dataset file, read lazily row by row."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from burn_dataset._base import Dataset, check_index
from burn_dataset._errors import DatasetError
from burn_dataset._items import row_converter
from burn_dataset._sqlite_checksum import CRC_COLUMN, layout_bytes, row_crc
from burn_dataset._sqlite_schema import (
    BLOB,
    check_split,
    decode_value,
    list_splits,
    quote,
    read_layout,
    read_layout_text,
)

# SQLite's historical limit on bound parameters is 999; stay below it for bulk reads.
_MAX_PARAMS = 900


def _open_readonly(path: Path) -> sqlite3.Connection:
    # mode=ro: readers never take a write lock, so any number of threads and processes can
    # read the same file at once. Each thread opens its own connection; check_same_thread is
    # off only so that `close()` may close them all from whichever thread calls it.
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)


class SqliteDataset(Dataset[Any]):
    """A split of an SQLite dataset file (as written by `SqliteDatasetWriter`).

    Rows are fetched on demand, so opening a large file is instant. Each thread gets its own
    read-only connection, which makes the dataset safe for data-loader worker threads and for
    several processes reading the same file.

    Args:
        db_file: the SQLite file.
        split: the table to read (e.g. "train").
        item_type: None to get dicts (column storage) or the stored value (blob storage); a
            dataclass or callable to build items from the stored fields.

    Example:
        >>> import tempfile, pathlib
        >>> from burn_dataset import SqliteDatasetWriter
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "d.db"
        >>> with SqliteDatasetWriter(path, storage="columns") as w:
        ...     _ = w.write_many("test", [{"x": 1.5}, {"x": 2.5}])
        >>> ds = SqliteDataset.from_db_file(path, "test")
        >>> len(ds), ds.get(1), ds.get(2)
        (2, {'x': 2.5}, None)
    """

    def __init__(self, db_file: str | os.PathLike[str], split: str, item_type: Any = None) -> None:
        self._db_file = Path(db_file)
        self._split = check_split(split)
        if not self._db_file.is_file():
            raise FileNotFoundError(f"SQLite dataset file not found: {self._db_file}")
        self._item_type = item_type
        self._layout: bytes | None = None
        self._local = threading.local()
        # (owning thread, connection): a data loader starts fresh worker threads every epoch, so
        # connections of threads that have exited are closed when a new one is opened.
        self._all_conns: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._conns_lock = threading.Lock()
        try:
            self._open(split)
        except (sqlite3.DatabaseError, ValueError, UnicodeError) as err:
            if isinstance(err, ValueError) and "not found in" in str(err):
                raise
            self.close()
            raise DatasetError(
                f"{self._db_file}: not a readable SQLite dataset ({type(err).__name__}: {err})"
            ) from None

    def _open(self, split: str) -> None:
        conn = self._connection()
        splits = list_splits(conn)
        if split not in splits:
            raise ValueError(
                f"split {split!r} not found in {self._db_file}; available splits: {splits}"
            )
        self._storage, self._columns = read_layout(conn, split)
        (self._len,) = conn.execute(f"SELECT COUNT(*) FROM {quote(split)}").fetchone()
        self._convert = row_converter(self._item_type) if self._item_type is not None else None
        table = [r[1] for r in conn.execute(f"PRAGMA table_info({quote(split)})").fetchall()]
        text = read_layout_text(conn, split)
        if CRC_COLUMN in table and text is None:
            raise DatasetError(
                f"{self._db_file}: split {split!r} has row checksums (written by burn-dataset) "
                "but its layout record is missing or damaged"
            )
        if text is not None:
            # Our writer's tables hold exactly row_id, the recorded columns and (since row
            # checksums) __crc32__: a renamed or missing column means a damaged schema.
            want = ["row_id", *self._columns]
            if table not in (want, [*want, CRC_COLUMN]):
                raise DatasetError(
                    f"{self._db_file}: split {split!r} has columns {table}, but its layout "
                    f"record says {want} (+ {CRC_COLUMN}): the schema is damaged"
                )
        # Rows carry a checksum when our writer wrote them (see _sqlite_checksum).
        self._layout = layout_bytes(*text) if CRC_COLUMN in table and text is not None else None
        names = ", ".join(quote(c) for c in self._columns)
        if self._layout is not None:
            names += ", " + quote(CRC_COLUMN)
        self._select_one = f"SELECT {names} FROM {quote(split)} WHERE row_id = ?"
        self._select_many = f"SELECT row_id, {names} FROM {quote(split)} WHERE row_id IN "

    @classmethod
    def from_db_file(
        cls, db_file: str | os.PathLike[str], split: str, item_type: Any = None
    ) -> SqliteDataset:
        """Burn's constructor name; same as `SqliteDataset(db_file, split, item_type)`."""
        return cls(db_file, split, item_type)

    @property
    def db_file(self) -> Path:
        return self._db_file

    @property
    def split(self) -> str:
        return self._split

    def _connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = _open_readonly(self._db_file)
            self._local.conn = conn
            with self._conns_lock:
                dead = [c for t, c in self._all_conns if not t.is_alive()]
                self._all_conns = [(t, c) for t, c in self._all_conns if t.is_alive()]
                self._all_conns.append((threading.current_thread(), conn))
            for old in dead:
                old.close()
        return conn

    def close(self) -> None:
        """Close every connection this dataset opened; a later `get` reopens one."""
        with self._conns_lock:
            conns, self._all_conns = self._all_conns, []
            self._local = threading.local()
        for _, conn in conns:
            conn.close()

    def __del__(self) -> None:
        if getattr(self, "_conns_lock", None) is not None:
            self.close()

    def _where(self, row_id: int) -> str:
        return f"{self._db_file}, split {self._split!r}, row {row_id - 1} (row_id {row_id})"

    def _decode(self, row_id: int, values: Sequence[Any]) -> Any:
        if self._layout is not None:
            *values, crc = values
            if crc != row_crc(self._layout, row_id, values):
                raise DatasetError(
                    f"{self._where(row_id)}: checksum mismatch, the stored row is damaged"
                )
        try:
            return self._build(values)
        except DatasetError:
            raise
        except Exception as err:  # noqa: BLE001 - any decoding failure is damage, named
            raise DatasetError(
                f"{self._where(row_id)}: cannot decode the stored item "
                f"({type(err).__name__}: {err})"
            ) from err

    def _build(self, values: Sequence[Any]) -> Any:
        if self._storage == BLOB:
            item = decode_value(values[0], "msgpack")
            if self._convert is not None and isinstance(item, dict):
                item = self._convert(item)
            return item
        pairs = zip(self._columns.items(), values, strict=True)
        row = {c: decode_value(v, e) for (c, e), v in pairs}
        return self._convert(row) if self._convert is not None else row

    def get(self, index: int) -> Any:
        index = check_index(index)
        if index >= self._len:
            return None
        try:
            values = self._connection().execute(self._select_one, (index + 1,)).fetchone()
        except sqlite3.DatabaseError as err:
            raise DatasetError(f"{self._where(index + 1)}: {type(err).__name__}: {err}") from None
        if values is None:
            raise DatasetError(
                f"{self._where(index + 1)}: missing; row ids must be 1..len without gaps"
            )
        return self._decode(index + 1, values)

    def get_many(self, indices: Sequence[int]) -> list[Any]:
        """Fetch several rows with one query per 900 indices (a data loader's batch read)."""
        wanted = [check_index(i) for i in indices]
        for i in wanted:
            if i >= self._len:
                raise IndexError(f"index {i} out of range for dataset of length {self._len}")
        conn = self._connection()
        by_id: dict[int, Any] = {}
        unique = sorted(set(wanted))
        for start in range(0, len(unique), _MAX_PARAMS):
            chunk = [i + 1 for i in unique[start : start + _MAX_PARAMS]]
            sql = self._select_many + "(" + ", ".join("?" * len(chunk)) + ")"
            try:
                for row in conn.execute(sql, chunk):
                    by_id[row[0]] = row[1:]
            except sqlite3.DatabaseError as err:
                raise DatasetError(
                    f"{self._db_file}, split {self._split!r}, rows {chunk[0] - 1}..{chunk[-1] - 1}: "
                    f"{type(err).__name__}: {err}"
                ) from None
        out = []
        for i in wanted:
            if i + 1 not in by_id:
                raise DatasetError(
                    f"{self._where(i + 1)}: missing; row ids must be 1..len without gaps"
                )
            out.append(self._decode(i + 1, by_id[i + 1]))
        return out

    def __len__(self) -> int:
        return self._len

    def __getstate__(self) -> dict[str, Any]:
        # Connections cannot cross process boundaries; each process reopens the file.
        state = self.__dict__.copy()
        for key in ("_local", "_all_conns", "_conns_lock"):
            del state[key]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._local = threading.local()
        self._all_conns = []
        self._conns_lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"SqliteDataset(db_file={str(self._db_file)!r}, split={self._split!r}, len={self._len})"
        )
