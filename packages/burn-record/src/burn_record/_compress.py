"""Compression layers: none, gzip (standard library) and zstandard, each with its own checksum.

gzip carries a CRC32 and length of the data, zstandard frames are written with their content
checksum
on, so corruption inside a compressed file is caught by the decompressor before the frame's CRC.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable
from typing import BinaryIO

import zstandard

# Reading lives in `_decompress` (bounded by the compressed size); re-exported for callers here.
from ._decompress import GZIP, NONE, ZSTD, decompress  # noqa: F401

# gzip level 6 is flate2's (Burn's) default; 9 is several times slower for a few percent.
GZIP_LEVEL = 6
ZSTD_LEVEL = 3


def _materialize(chunks: Iterable[bytes | memoryview]) -> tuple[list, int]:
    # The chunks are small headers and zero-copy views of tensors: listing them costs no copy,
    # and gives the exact size a zstandard frame declares in its header.
    parts = list(chunks)
    return parts, sum(memoryview(c).nbytes for c in parts)


def write(fileobj: BinaryIO, chunks: Iterable[bytes | memoryview], compression: str) -> None:
    """Stream `chunks` into `fileobj`, compressed as asked."""
    if compression == NONE:
        fileobj.writelines(chunks)
    elif compression == GZIP:
        # mtime=0 keeps files byte-identical across runs.
        with gzip.GzipFile(fileobj=fileobj, mode="wb", compresslevel=GZIP_LEVEL, mtime=0) as gz:
            for chunk in chunks:
                gz.write(chunk)
    elif compression == ZSTD:
        parts, size = _materialize(chunks)
        cctx = zstandard.ZstdCompressor(
            level=ZSTD_LEVEL, write_checksum=True, write_content_size=True, threads=-1
        )
        with cctx.stream_writer(fileobj, size=size, closefd=False) as zw:
            for chunk in parts:
                zw.write(chunk)
    else:
        raise ValueError(f"unknown compression {compression!r}")


def compress(chunks: Iterable[bytes | memoryview], compression: str) -> bytes:
    """The same as `write`, into memory."""
    import io

    out = io.BytesIO()
    write(out, chunks, compression)
    return out.getvalue()

