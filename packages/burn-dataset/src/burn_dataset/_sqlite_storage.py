"""`SqliteDatasetStorage`: names a dataset file (by name in a cache dir, or by path)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from burn_dataset._cache import default_cache_dir
from burn_dataset._sqlite_dataset import SqliteDataset, _open_readonly
from burn_dataset._sqlite_schema import BLOB, list_splits
from burn_dataset._sqlite_writer import SqliteDatasetWriter


class SqliteDatasetStorage:
    """Where an SQLite dataset lives, and how to open a writer or a reader for it.

    `from_name("mnist")` resolves to `<base_dir>/mnist.db` (base dir: `default_cache_dir()`
    unless `with_base_dir` is given; '/' in names becomes '_', as in Burn).

    Example:
        >>> import tempfile
        >>> storage = SqliteDatasetStorage.from_name("toy").with_base_dir(tempfile.mkdtemp())
        >>> storage.exists()
        False
        >>> with storage.writer() as w:
        ...     _ = w.write("train", [1, 2, 3])
        >>> storage.exists(), storage.splits(), storage.reader("train").get(0)
        (True, ['train'], [1, 2, 3])
    """

    def __init__(
        self,
        name: str | None = None,
        db_file: str | os.PathLike[str] | None = None,
        base_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if (name is None) == (db_file is None):
            raise ValueError("give exactly one of name= or db_file=")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise ValueError(f"dataset name must be a non-empty string, got {name!r}")
        self._name = name
        self._file = Path(db_file) if db_file is not None else None
        self._base_dir = Path(base_dir) if base_dir is not None else None

    @classmethod
    def from_name(cls, name: str) -> SqliteDatasetStorage:
        """A dataset called `name` in the cache directory."""
        return cls(name=name)

    @classmethod
    def from_file(cls, db_file: str | os.PathLike[str]) -> SqliteDatasetStorage:
        """A dataset at an explicit path."""
        return cls(db_file=db_file)

    def with_base_dir(self, base_dir: str | os.PathLike[str]) -> SqliteDatasetStorage:
        """Resolve names under `base_dir` instead of the default cache directory."""
        if self._file is not None:
            raise ValueError("with_base_dir only applies to storages created with from_name")
        return SqliteDatasetStorage(name=self._name, base_dir=base_dir)

    def db_file(self) -> Path:
        """The database file path."""
        if self._file is not None:
            return self._file
        assert self._name is not None
        base = self._base_dir if self._base_dir is not None else default_cache_dir()
        return base / f"{self._name.replace('/', '_')}.db"

    def exists(self) -> bool:
        """Whether the (completed) database file exists."""
        return self.db_file().is_file()

    def splits(self) -> list[str]:
        """The split names stored in the database."""
        if not self.exists():
            raise FileNotFoundError(f"SQLite dataset file not found: {self.db_file()}")
        conn: sqlite3.Connection = _open_readonly(self.db_file())
        try:
            return list_splits(conn)
        finally:
            conn.close()

    def writer(self, overwrite: bool = False, *, storage: str = BLOB) -> SqliteDatasetWriter:
        """A writer creating this database (see `SqliteDatasetWriter`)."""
        return SqliteDatasetWriter(self.db_file(), overwrite, storage=storage)

    def reader(self, split: str, item_type: Any = None) -> SqliteDataset:
        """A dataset reading `split` of this database."""
        return SqliteDataset(self.db_file(), split, item_type)

    def __repr__(self) -> str:
        return f"SqliteDatasetStorage(db_file={str(self.db_file())!r})"
