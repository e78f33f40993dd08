"""Per-row checksums of SQLite datasets: a CRC32 column the writer fills and the reader checks.

SQLite checks none of a row's bytes: of 200 single-bit flips in a dataset file, 155 returned
wrong items with no error. Each row written by `SqliteDatasetWriter` carries
`crc32(layout, row_id, stored values)` in a `__crc32__` column. The layout (the split's storage
and column encodings, as stored in the metadata table) and the row id are part of it, so a flip
in the metadata, or in the b-tree that maps ids to rows, fails the check as well as a flip in
the values. Files without the column (written before it, or by other programs) load unchecked.

Example:
    >>> a = row_crc(b"blob{}", 1, [b"x", 2, None])
    >>> a == row_crc(b"blob{}", 1, [b"x", 2, None]), a == row_crc(b"blob{}", 2, [b"x", 2, None])
    (True, False)
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from typing import Any

CRC_COLUMN = "__crc32__"
_Q = struct.Struct("<q")
_D = struct.Struct("<d")


def layout_bytes(storage: str, columns_json: str) -> bytes:
    """The split's layout as the metadata table stores it (the text, not its parse)."""
    return storage.encode() + b"\0" + columns_json.encode("utf-8", "surrogatepass")


def row_crc(layout: bytes, row_id: int, values: Sequence[Any]) -> int:
    """CRC32 of a row's layout, id and stored values, each value tagged with its SQLite type."""
    crc = zlib.crc32(_Q.pack(row_id), zlib.crc32(layout))
    for v in values:
        if v is None:
            crc = zlib.crc32(b"N", crc)
        elif isinstance(v, int):
            crc = zlib.crc32(b"I" + _Q.pack(v), crc)
        elif isinstance(v, float):
            crc = zlib.crc32(b"F" + _D.pack(v), crc)
        elif isinstance(v, str):
            raw = v.encode("utf-8", "surrogatepass")
            crc = zlib.crc32(b"S" + _Q.pack(len(raw)) + raw, crc)
        else:
            raw = bytes(v)
            crc = zlib.crc32(b"B" + _Q.pack(len(raw)) + raw, crc)
    return crc
