"""Compression layers: none, gzip (standard library) and zstandard, each with its own checksum.

gzip carries a CRC32 and length of the data, zstandard frames are written with their content
checksum
on, so corruption inside a compressed file is caught by the decompressor before the frame's CRC.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Callable, Iterable
from typing import BinaryIO

import zstandard

from ._errors import RecordCorruptedError, RecordFormatError
from ._frame import GZIP_MAGIC, ZSTD_MAGIC, describe

NONE, GZIP, ZSTD = "none", "gzip", "zstd"
# gzip level 6 is flate2's (Burn's) default; 9 is several times slower for a few percent.
GZIP_LEVEL = 6
ZSTD_LEVEL = 3


def _materialize(chunks: Iterable[bytes | memoryview]) -> tuple[list, int]:
    # The chunks are small headers and zero-copy views of tensors: listing them costs no copy,
    # and gives the exact size a zstandard frame declares in its header (see `_cap`).
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


# Decompressed bytes are produced this many at a time, so a stream that does not begin as the
# record it should be is refused after one step, not after it has filled memory.
STEP = 1 << 20
# deflate cannot expand more than 1032:1; gzip's trailer also states the size (mod 2^32).
DEFLATE_MAX_RATIO = 1032
# For zstandard frames that do not state their size (files written before burn-record did):
# at most this ratio, and never less than FLOOR bytes. BURN_RECORD_MAX_RATIO raises it.
LEGACY_ZSTD_RATIO = 1032
FLOOR = 64 << 20


def _cap(data: memoryview, compression: str, reader: str) -> tuple[int, bool]:
    """(most bytes the stream may decompress to, whether that number is exact)."""
    n = len(data)
    if compression == GZIP:
        bound = DEFLATE_MAX_RATIO * n + 1024
        isize = int.from_bytes(bytes(data[-4:]), "little") if n >= 18 else 0
        if bound < (1 << 32):  # the trailer's size is the size itself
            return isize, True
        return bound, False
    size = zstandard.frame_content_size(bytes(data[:18]))
    if size >= 0:
        return size, True
    ratio = _env_ratio(reader)
    return max(FLOOR, ratio * n), False


def _env_ratio(reader: str) -> int:
    value = os.environ.get("BURN_RECORD_MAX_RATIO", "").strip()
    if not value:
        return LEGACY_ZSTD_RATIO
    try:
        ratio = int(value)
    except ValueError:
        ratio = 0
    if ratio < 1:
        raise ValueError(
            f"{reader}: BURN_RECORD_MAX_RATIO must be a positive integer, got {value!r}"
        )
    return ratio


def decompress(
    data: bytes | bytearray | memoryview,
    compression: str,
    reader: str,
    head: Callable[[bytearray], None] | None = None,
):
    """Undo `write`; a different container gives RecordFormatError, damage RecordCorruptedError.

    The stream is decompressed `STEP` bytes at a time into one buffer, never past what the
    container states (a zstandard frame's content size, gzip's trailer) or, where it states
    nothing, a bounded ratio of the compressed size. `head(buffer)` is called once the first
    bytes are out (at least 32, or all there are): it raises if they are not the record's
    beginning, so a decompression bomb of anything else costs one step.
    """
    if compression == NONE:
        # The frame's magic check names what the data is instead.
        return data
    view = memoryview(data).cast("B") if memoryview(data).format != "B" else memoryview(data)
    magic = GZIP_MAGIC if compression == GZIP else ZSTD_MAGIC
    if bytes(view[: len(magic)]) != magic:
        if len(view) < len(magic) and magic.startswith(bytes(view)) and len(view):
            raise RecordCorruptedError(f"{reader}: record truncated to {len(view)} bytes")
        raise RecordFormatError(
            f"{reader} expects {'gzip' if compression == GZIP else 'zstandard'}-compressed data, "
            f"but got {describe(view)}; load the file with the recorder that wrote it"
        )
    name = "gzip" if compression == GZIP else "zstandard"
    out = bytearray()
    try:
        cap, exact = _cap(view, compression, reader)
        if compression == GZIP:
            _gunzip(view, out, cap, exact, reader, head)
        else:
            _unzstd(view, out, cap, exact, reader, head)
    except (OSError, EOFError, zlib.error, zstandard.ZstdError) as err:
        raise RecordCorruptedError(f"{reader}: damaged {name} data: {err}") from None
    return out


def _grow(out: bytearray, chunk: bytes, cap: int, exact: bool, n: int, name: str, reader, head):
    """Append one step's output, refusing it past the cap; check the head once it is out."""
    if len(out) + len(chunk) > cap:
        what = "states" if exact else "allows"
        raise RecordCorruptedError(
            f"{reader}: {name} data decompresses to more than the {cap} bytes its container "
            f"{what} ({n} compressed bytes)"
            + ("" if exact else "; set BURN_RECORD_MAX_RATIO to allow a larger ratio")
        )
    before = len(out)
    out += chunk
    if head is not None and before < 32 <= len(out):
        head(out)


def _gunzip(view, out, cap, exact, reader, head) -> None:
    dobj = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    pos, pending = 0, b""
    while not dobj.eof:
        if not pending:
            if pos >= len(view):
                raise RecordCorruptedError(f"{reader}: gzip data is truncated")
            pending = bytes(view[pos : pos + STEP])
            pos += len(pending)
        # max_length bounds each step's output; the input it did not consume waits.
        chunk = dobj.decompress(pending, STEP)
        pending = dobj.unconsumed_tail
        _grow(out, chunk, cap, exact, len(view), "gzip", reader, head)
    if pos < len(view) or dobj.unused_data or pending:
        raise RecordCorruptedError(f"{reader}: unexpected bytes after the gzip stream")
    if head is not None and len(out) < 32:
        head(out)


def zstd_frame_end(view: memoryview, reader: str) -> int:
    """Where the zstandard frame starting at 0 ends, from its header and block headers (the
    stream reader below reports neither a missing checksum nor bytes after the frame)."""
    n = len(view)
    if n < 6:
        raise RecordCorruptedError(f"{reader}: zstandard data is truncated")
    fhd = view[4]
    single = (fhd >> 5) & 1
    fcs = (1 if single else 0, 2, 4, 8)[fhd >> 6]
    pos = 5 + (0 if single else 1) + (0, 1, 2, 4)[fhd & 3] + fcs
    while True:
        if pos + 3 > n:
            raise RecordCorruptedError(f"{reader}: zstandard data is truncated")
        bh = view[pos] | view[pos + 1] << 8 | view[pos + 2] << 16
        kind = (bh >> 1) & 3
        if kind == 3:
            raise RecordCorruptedError(f"{reader}: damaged zstandard data (reserved block type)")
        pos += 3 + (1 if kind == 1 else bh >> 3)
        if bh & 1:
            break
    pos += 4 if (fhd >> 2) & 1 else 0
    if pos > n:
        raise RecordCorruptedError(f"{reader}: zstandard data is truncated")
    return pos


def _unzstd(view, out, cap, exact, reader, head) -> None:
    if zstd_frame_end(view, reader) != len(view):
        raise RecordCorruptedError(f"{reader}: unexpected bytes after the zstandard frame")
    # A stream reader hands out at most STEP bytes per read, however much one input byte holds.
    dctx = zstandard.ZstdDecompressor()
    with dctx.stream_reader(view, read_size=STEP, read_across_frames=False) as src:
        while True:
            chunk = src.read(STEP)
            if not chunk:
                break
            _grow(out, chunk, cap, exact, len(view), "zstandard", reader, head)
    if head is not None and len(out) < 32:
        head(out)
    if exact and len(out) != cap:
        raise RecordCorruptedError(
            f"{reader}: zstandard data is truncated ({len(out)} of the {cap} bytes its frame "
            "states)"
        )
