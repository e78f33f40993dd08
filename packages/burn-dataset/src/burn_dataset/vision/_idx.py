"""Reading IDX files, the format MNIST ships in (optionally gzip-compressed)."""

from __future__ import annotations

import gzip
import os
import struct
from pathlib import Path

import numpy as np

# IDX type byte -> big-endian numpy dtype (http://yann.lecun.com/exdb/mnist/, "IDX file format")
_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
_GZIP_MAGIC = b"\x1f\x8b"


def parse_idx(data: bytes, source: str = "<bytes>") -> np.ndarray:
    """Decode IDX bytes into an array with the file's shape and a native-endian dtype.

    Example:
        >>> raw = bytes([0, 0, 0x08, 1, 0, 0, 0, 3, 7, 8, 9])
        >>> parse_idx(raw).tolist()
        [7, 8, 9]
    """
    if len(data) < 4 or data[:2] != b"\x00\x00":
        raise ValueError(f"{source}: not an IDX file (expected magic 00 00 <type> <ndim>)")
    type_code, ndim = data[2], data[3]
    if type_code not in _IDX_DTYPES:
        raise ValueError(
            f"{source}: unknown IDX element type 0x{type_code:02x}; expected one of "
            + ", ".join(f"0x{c:02x}" for c in _IDX_DTYPES)
        )
    header = 4 + 4 * ndim
    if len(data) < header:
        raise ValueError(f"{source}: truncated IDX header ({len(data)} bytes for {ndim} dims)")
    dims = struct.unpack(f">{ndim}I", data[4:header])
    dtype = np.dtype(_IDX_DTYPES[type_code])
    count = int(np.prod(dims, dtype=np.int64))
    expected = header + count * dtype.itemsize
    if len(data) != expected:
        raise ValueError(
            f"{source}: IDX size mismatch: shape {list(dims)} of {dtype.name} needs {expected} "
            f"bytes, file has {len(data)}"
        )
    array = np.frombuffer(data, dtype=dtype, count=count, offset=header).reshape(dims)
    return array.astype(dtype.newbyteorder("="))


def read_idx(path: str | os.PathLike[str]) -> np.ndarray:
    """Read an IDX file; gzip compression is detected from the content, not the name."""
    raw = Path(path).read_bytes()
    if raw[:2] == _GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as err:
            raise ValueError(f"{path}: corrupt gzip data ({err})") from None
    return parse_idx(raw, str(path))
