"""Decompressing a record with bounded memory, whatever its container claims.

A compressed record may decompress to at most `FLOOR + ratio x its compressed size` bytes
(`max_output`; ratio 3 by default, `BURN_RECORD_MAX_RATIO` sets it). Honest records compress
less than that: random or trained float weights by about 1.1x, f32 weights rounded to bf16 (as
saved from bf16 training) by 2.1-2.2x. A container that states a larger size (a
zstandard frame's content size, gzip's ISIZE trailer) is refused before anything is
decompressed; one that states less, or nothing, or lies (gzip's ISIZE is the size modulo 2^32,
so 4 GiB of zeros states 0) is decompressed `STEP` bytes at a time and refused the moment its
output passes the bound. A file is read `STEP` bytes at a time too, never whole, so refusing one
costs about the bound and no more: within 64 MiB + 2 x the file's size for files up to 32 MiB,
32 MiB + 3 x beyond (`BURN_RECORD_MAX_RATIO=2` makes it 2 x at every size).
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable
from typing import Any

import zstandard

from ._errors import RecordCorruptedError, RecordFormatError
from ._frame import GZIP_MAGIC, ZSTD_MAGIC, describe

NONE, GZIP, ZSTD = "none", "gzip", "zstd"
# Decompressed bytes are produced this many at a time, so a stream that does not begin as the
# record it should be is refused after one step, not after it has filled memory.
STEP = 1 << 20
# Any record may decompress to this much, whatever its compressed size.
FLOOR = 32 << 20
# And beyond the floor, to this many times its compressed size: above the 2.2x of bf16-rounded
# f32 weights, the most compressible honest records met (see the README).
DEFAULT_RATIO = 3
ENV = "BURN_RECORD_MAX_RATIO"


def max_ratio(reader: str = "burn_record") -> int:
    """Decompressed bytes allowed per compressed byte: `BURN_RECORD_MAX_RATIO`, default 3.

    Example:
        >>> max_ratio()
        3
    """
    value = os.environ.get(ENV, "").strip()
    if not value:
        return DEFAULT_RATIO
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{reader}: {ENV} must be a positive integer, got {value!r}")
    return int(value)


def max_output(compressed: int, reader: str = "burn_record") -> int:
    """The most bytes `compressed` bytes of gzip or zstandard data may decompress to.

    Example:
        >>> max_output(10 << 20) == (32 << 20) + 3 * (10 << 20)
        True
    """
    return FLOOR + max_ratio(reader) * compressed


class Source:
    """Compressed bytes read a step at a time: from memory, or from an open file (which is
    never read whole, so its size is not spent twice)."""

    def __init__(self, data: Any):
        if hasattr(data, "fileno"):
            self.file: Any = data
            self.fd = data.fileno()
            self.size = os.fstat(self.fd).st_size
            self.view = None
            data.seek(0)
        else:
            view = memoryview(data)
            self.view = view if view.format == "B" and view.ndim == 1 else view.cast("B")
            self.file = None
            self.size = len(self.view)
        self.pos = 0

    def pread(self, offset: int, n: int) -> bytes:
        """Up to `n` bytes at `offset` (fewer at the end)."""
        if self.view is not None:
            return bytes(self.view[offset : offset + n])
        return os.pread(self.fd, n, offset)

    def read(self, n: int) -> bytes:
        """The next `n` bytes in order (b"" at the end)."""
        chunk = self.pread(self.pos, n)
        self.pos += len(chunk)
        return chunk

    def stream(self) -> Any:
        """A file-like object or buffer for zstandard's stream reader, from the start."""
        if self.view is not None:
            return self.view
        self.file.seek(0)
        return self.file


def decompress(
    data: Any,
    compression: str,
    reader: str,
    head: Callable[[bytearray], None] | None = None,
) -> Any:
    """Undo `_compress.write`; a different container gives RecordFormatError, damage or a bomb
    RecordCorruptedError.

    Args:
        data: the compressed bytes, or a binary file open at them.
        compression: `"none"`, `"gzip"` or `"zstd"`.
        reader: names the recorder in errors.
        head: called once the first bytes are out (at least 32, or all there are); it raises if
            they are not the record's beginning, so a bomb of anything else costs one step.
    """
    if compression == NONE:
        # The frame's magic check names what the data is instead.
        return data
    src = Source(data)
    name = "gzip" if compression == GZIP else "zstandard"
    magic = GZIP_MAGIC if compression == GZIP else ZSTD_MAGIC
    first = src.pread(0, 32)
    if first[: len(magic)] != magic:
        if len(first) < len(magic) and magic.startswith(first) and first:
            raise RecordCorruptedError(f"{reader}: record truncated to {len(first)} bytes")
        raise RecordFormatError(
            f"{reader} expects {name}-compressed data, but got {describe(first)}; load the file "
            "with the recorder that wrote it"
        )
    out = bytearray()
    try:
        cap = max_output(src.size, reader)
        stated = _stated_size(src, compression, first)

        def check(buf: bytearray) -> None:
            # After the first step: data that is not a record at all says so first.
            if head is not None:
                head(buf)
            if stated > cap:
                raise RecordCorruptedError(
                    f"{reader}: the {name} data states that it decompresses to {stated} bytes, "
                    f"more than the {cap} that {src.size} compressed bytes may hold "
                    f"({_rule(reader)})"
                )

        exact = compression == ZSTD and 0 <= stated <= cap
        limit = stated if exact else cap
        if compression == GZIP:
            _gunzip(src, out, limit, reader, check)
        else:
            _unzstd(src, out, limit, exact, reader, check)
    except (OSError, EOFError, zlib.error, zstandard.ZstdError) as err:
        raise RecordCorruptedError(f"{reader}: damaged {name} data: {err}") from None
    return out


def _rule(reader: str) -> str:
    return f"{FLOOR >> 20} MiB + {max_ratio(reader)} x; set {ENV} to allow a larger ratio"


def _stated_size(src: Source, compression: str, first: bytes) -> int:
    """What the container says it holds: a zstandard frame's content size (-1 if absent), or
    gzip's ISIZE, which is the true size modulo 2^32 (so at most the true size)."""
    if compression == GZIP:
        return int.from_bytes(src.pread(src.size - 4, 4), "little") if src.size >= 18 else -1
    return zstandard.frame_content_size(first[:18])


def _grow(out: bytearray, chunk: bytes, limit: int, src: Source, name: str, reader, head):
    """Append one step's output, refusing it past `limit`; check the head once it is out."""
    if head is not None and len(out) < 32 <= len(out) + len(chunk):
        head(out + chunk[: 32 - len(out)])
    if len(out) + len(chunk) > limit:
        if limit < max_output(src.size, reader):
            bound = f"the {limit} bytes its container states ({src.size} compressed bytes)"
        else:
            bound = f"the {limit} bytes that {src.size} compressed bytes may hold ({_rule(reader)})"
        raise RecordCorruptedError(f"{reader}: {name} data decompresses to more than {bound}")
    out += chunk


def _gunzip(src: Source, out: bytearray, limit: int, reader: str, head) -> None:
    dobj = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    pending = b""
    while not dobj.eof:
        if not pending:
            pending = src.read(STEP)  # b"" once the file is read
        # max_length bounds each step's output; the input it did not consume waits.
        chunk = dobj.decompress(pending, STEP)
        if not chunk and not pending and not dobj.eof:
            raise RecordCorruptedError(f"{reader}: gzip data is truncated")
        pending = dobj.unconsumed_tail
        _grow(out, chunk, limit, src, "gzip", reader, head)
    if dobj.unused_data or pending or src.read(1):
        raise RecordCorruptedError(f"{reader}: unexpected bytes after the gzip stream")
    if head is not None and len(out) < 32:
        head(out)


def zstd_frame_end(src: Source, reader: str) -> int:
    """Where the zstandard frame starting at 0 ends, from its header and block headers (the
    stream reader below reports neither a missing checksum nor bytes after the frame). Block
    headers are read through a window of `STEP` bytes, so a file is scanned, not loaded."""
    n = src.size
    window, at = b"", 0

    def byte(pos: int) -> int:
        nonlocal window, at
        if not at <= pos < at + len(window):
            window, at = src.pread(pos, STEP), pos
            if not window:
                raise RecordCorruptedError(f"{reader}: zstandard data is truncated")
        return window[pos - at]

    if n < 6:
        raise RecordCorruptedError(f"{reader}: zstandard data is truncated")
    fhd = byte(4)
    single = (fhd >> 5) & 1
    fcs = (1 if single else 0, 2, 4, 8)[fhd >> 6]
    pos = 5 + (0 if single else 1) + (0, 1, 2, 4)[fhd & 3] + fcs
    while True:
        if pos + 3 > n:
            raise RecordCorruptedError(f"{reader}: zstandard data is truncated")
        bh = byte(pos) | byte(pos + 1) << 8 | byte(pos + 2) << 16
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


def _unzstd(src: Source, out: bytearray, limit: int, exact: bool, reader: str, head) -> None:
    if zstd_frame_end(src, reader) != src.size:
        raise RecordCorruptedError(f"{reader}: unexpected bytes after the zstandard frame")
    # A stream reader hands out at most STEP bytes per read, however much one input byte holds.
    dctx = zstandard.ZstdDecompressor()
    with dctx.stream_reader(
        src.stream(), read_size=STEP, read_across_frames=False, closefd=False
    ) as stream:
        while True:
            chunk = stream.read(STEP)
            if not chunk:
                break
            _grow(out, chunk, limit, src, "zstandard", reader, head)
    if head is not None and len(out) < 32:
        head(out)
    if exact and len(out) != limit:
        raise RecordCorruptedError(
            f"{reader}: zstandard data is truncated ({len(out)} of the {limit} bytes its frame "
            "states)"
        )
