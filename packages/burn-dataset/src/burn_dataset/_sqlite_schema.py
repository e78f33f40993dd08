"""The on-disk layout shared by `SqliteDatasetWriter` and `SqliteDataset`.

One table per split, named after the split, with `row_id INTEGER PRIMARY KEY` equal to index + 1
(as in Burn). Items are stored either in one `item` BLOB column (msgpack) or in one typed column per
field. A metadata table records, per split, the layout and each column's encoding, so a reader can
restore types SQLite does not have (bool, numpy arrays, nested values).
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any

import numpy as np

from burn_dataset._codec import pack, unpack

META_TABLE = "__burn_dataset_meta__"
BLOB = "blob"
COLUMNS = "columns"
STORAGES = (BLOB, COLUMNS)

# encoding name -> SQLite column type
ENCODINGS = {
    "int": "INTEGER",
    "float": "REAL",
    "str": "TEXT",
    "bytes": "BLOB",
    "bool": "INTEGER",
    "msgpack": "BLOB",
}

_SPLIT_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")


def check_split(split: Any) -> str:
    """Validate a split name: it becomes a table name, so keep it to a safe character set."""
    if not isinstance(split, str) or not _SPLIT_RE.match(split) or split.startswith("__"):
        raise ValueError(
            f"split name must be a non-empty string of letters, digits, '_', '.', '-' not starting "
            f"with '__' or '.', got {split!r}"
        )
    return split


def quote(identifier: str) -> str:
    """Quote an SQL identifier (double quotes, inner quotes doubled)."""
    return '"' + identifier.replace('"', '""') + '"'


def encoding_of(value: Any) -> str:
    """Pick the column encoding for the first value seen in a column."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, np.integer)):
        return "int"
    if isinstance(value, (float, np.floating)):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "bytes"
    return "msgpack"  # None, arrays, lists, dicts: encoded whole


def encode_value(value: Any, encoding: str, column: str) -> Any:
    """Convert a Python value to what SQLite stores for a column of `encoding`."""
    if value is None:
        return None
    if encoding == "msgpack":
        return pack(value)
    ok = {
        "bool": isinstance(value, (bool, np.bool_)),
        "int": isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)),
        "float": isinstance(value, (int, float, np.integer, np.floating))
        and not isinstance(value, (bool, np.bool_)),
        "str": isinstance(value, str),
        "bytes": isinstance(value, (bytes, bytearray, memoryview)),
    }[encoding]
    if not ok:
        raise TypeError(
            f"column {column!r} holds {encoding} values (decided by the first item written), "
            f"got {type(value).__name__} ({value!r:.60})"
        )
    if encoding == "bool":
        return int(bool(value))
    if encoding == "int":
        return int(value)
    if encoding == "float":
        return float(value)
    if encoding == "bytes":
        return bytes(value)
    return value


def decode_value(value: Any, encoding: str) -> Any:
    """Inverse of `encode_value`."""
    if value is None:
        return None
    if encoding == "msgpack":
        return unpack(value)
    if encoding == "bool":
        return bool(value)
    return value


def ensure_meta_table(conn: sqlite3.Connection) -> None:
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {quote(META_TABLE)} "
        "(split TEXT PRIMARY KEY, storage TEXT NOT NULL, columns TEXT NOT NULL)"
    )


def write_meta(conn: sqlite3.Connection, split: str, storage: str, columns: dict[str, str]) -> str:
    """Record a split's layout; returns the columns' JSON text as stored (rows checksum it)."""
    text = json.dumps(columns)
    conn.execute(
        f"INSERT OR REPLACE INTO {quote(META_TABLE)} VALUES (?, ?, ?)", (split, storage, text)
    )
    return text


def list_splits(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "ORDER BY name"
    ).fetchall()
    return [name for (name,) in rows if name != META_TABLE]


def read_layout(conn: sqlite3.Connection, split: str) -> tuple[str, dict[str, str]]:
    """Return (storage, {column: encoding}) for a split, inferring it for foreign databases."""
    has_meta = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (META_TABLE,)
    ).fetchone()
    if has_meta:
        row = conn.execute(
            f"SELECT storage, columns FROM {quote(META_TABLE)} WHERE split = ?", (split,)
        ).fetchone()
        if row is not None:
            columns = json.loads(row[1])
            if row[0] not in STORAGES or not isinstance(columns, dict):
                raise ValueError(f"split {split!r} has a damaged layout record {row!r:.120}")
            return row[0], columns
    # A database written by something else (e.g. Burn's own importer): take columns as stored.
    info = conn.execute(f"PRAGMA table_info({quote(split)})").fetchall()
    names = [r[1] for r in info]
    if "row_id" not in names:
        raise ValueError(
            f"table {split!r} has no 'row_id' column (columns: {names}); burn-dataset tables "
            "index rows by row_id = index + 1"
        )
    columns = {name: "raw" for name in names if name not in ("row_id", "__crc32__")}
    if list(columns) == ["item"] and (info[names.index("item")][2] or "").upper() == "BLOB":
        return BLOB, {"item": "msgpack"}
    return COLUMNS, columns


def read_layout_text(conn: sqlite3.Connection, split: str) -> tuple[str, str] | None:
    """The split's (storage, columns JSON) exactly as stored, or None without a metadata row."""
    has_meta = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (META_TABLE,)
    ).fetchone()
    if not has_meta:
        return None
    row = conn.execute(
        f"SELECT storage, columns FROM {quote(META_TABLE)} WHERE split = ?", (split,)
    ).fetchone()
    return None if row is None else (str(row[0]), str(row[1]))
