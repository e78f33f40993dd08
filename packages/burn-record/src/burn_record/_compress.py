"""Compression layers: none, gzip (standard library) and zstandard, each with its own checksum.

gzip carries a CRC32 and length of the data, zstandard frames are written with their content
checksum
on, so corruption inside a compressed file is caught by the decompressor before the frame's CRC.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterable
from typing import BinaryIO

import zstandard

from ._errors import RecordCorruptedError, RecordFormatError
from ._frame import GZIP_MAGIC, ZSTD_MAGIC, describe

NONE, GZIP, ZSTD = "none", "gzip", "zstd"
# gzip level 6 is flate2's (Burn's) default; 9 is several times slower for a few percent.
GZIP_LEVEL = 6
ZSTD_LEVEL = 3


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
        cctx = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=True, threads=-1)
        with cctx.stream_writer(fileobj, closefd=False) as zw:
            for chunk in chunks:
                zw.write(chunk)
    else:
        raise ValueError(f"unknown compression {compression!r}")


def compress(chunks: Iterable[bytes | memoryview], compression: str) -> bytes:
    """The same as `write`, into memory."""
    import io

    out = io.BytesIO()
    write(out, chunks, compression)
    return out.getvalue()


def decompress(data: bytes | bytearray | memoryview, compression: str, reader: str):
    """Undo `write`; a different container gives RecordFormatError, damage RecordCorruptedError."""
    if compression == NONE:
        # The frame's magic check names what the data is instead.
        return data
    magic = GZIP_MAGIC if compression == GZIP else ZSTD_MAGIC
    if bytes(data[: len(magic)]) != magic:
        if len(data) < len(magic) and magic.startswith(bytes(data)) and len(data):
            raise RecordCorruptedError(f"{reader}: record truncated to {len(data)} bytes")
        raise RecordFormatError(
            f"{reader} expects {'gzip' if compression == GZIP else 'zstandard'}-compressed data, "
            f"but got {describe(data)}; load the file with the recorder that wrote it"
        )
    if compression == GZIP:
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as err:
            raise RecordCorruptedError(f"{reader}: damaged gzip data: {err}") from None
    try:
        dobj = zstandard.ZstdDecompressor().decompressobj()
        out = dobj.decompress(data)
    except zstandard.ZstdError as err:
        raise RecordCorruptedError(f"{reader}: damaged zstandard data: {err}") from None
    if not dobj.eof:
        raise RecordCorruptedError(f"{reader}: zstandard data is truncated")
    if dobj.unused_data:
        raise RecordCorruptedError(f"{reader}: unexpected bytes after the zstandard frame")
    return out
