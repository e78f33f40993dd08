"""Binary framing: magic + version in front, length + CRC32 behind, around every binary payload.

    offset  size  field
    0       8     magic: b"\\x89BRNMPK\\n" (named msgpack) or b"\\x89BRNBIN\\n" (positional binary)
    8       2     frame version, u16 LE (1)
    10      2     flags, u16 LE (0; a reader refuses bits it does not know)
    12      n     payload
    12+n    8     n, u64 LE
    20+n    4     zlib.crc32(payload), u32 LE
    24+n    4     end marker b"NRB\\x89"

Length and checksum sit in a trailer, not a header, so a writer can stream gigabytes of tensor bytes
straight to disk (or into gzip/zstd) in one pass. Like PNG's signature, the magic's 0x89 and `\\n`
expose text-mode mangling. Compressed files carry the same frame inside the compressed stream.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Iterator

from ._errors import RecordCorruptedError, RecordFormatError, RecordVersionError

MAGIC_MPK = b"\x89BRNMPK\n"
MAGIC_BIN = b"\x89BRNBIN\n"
END_MARKER = b"NRB\x89"
FRAME_VERSION = 1
_HEAD = struct.Struct("<8sHH")
_TAIL = struct.Struct("<QI4s")
OVERHEAD = _HEAD.size + _TAIL.size

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
JSON_PREFIX = b'{"burn_record": "json/'

NAMES = {
    MAGIC_MPK: "a named-msgpack record (NamedMpk* recorders)",
    MAGIC_BIN: "a positional binary record (Bin* recorders)",
}


def describe(data: bytes | memoryview) -> str:
    """A human description of what some bytes look like, for wrong-recorder errors."""
    head = bytes(data[:32])
    if not head:
        return "empty data"
    if head.startswith(GZIP_MAGIC):
        return "gzip-compressed data"
    if head.startswith(ZSTD_MAGIC):
        return "zstandard-compressed data"
    if head[:8] in NAMES:
        return NAMES[head[:8]]
    if head.startswith(JSON_PREFIX):
        return "a JSON record (JsonGz/PrettyJson recorders)"
    if head.lstrip()[:1] in (b"{", b"["):
        return "JSON text that is not a burn record"
    return f"unknown data starting with {head[:8]!r}"


def frame(payload: Iterable[bytes | memoryview], magic: bytes) -> Iterator[bytes | memoryview]:
    """Yield the framed record chunk by chunk, checksumming the payload as it streams past."""
    yield _HEAD.pack(magic, FRAME_VERSION, 0)
    crc, size = 0, 0
    for chunk in payload:
        crc = zlib.crc32(chunk, crc)
        size += len(chunk)
        yield chunk
    yield _TAIL.pack(size, crc, END_MARKER)


def unframe(data: bytes | bytearray | memoryview, magic: bytes, reader: str) -> memoryview:
    """Check magic, version, length and CRC; return the payload without copying it."""
    view = memoryview(data)
    if bytes(view[:8]) != magic:
        if len(view) < 8 and magic.startswith(bytes(view)) and len(view) > 0:
            raise RecordCorruptedError(f"{reader}: record truncated to {len(view)} bytes")
        raise RecordFormatError(
            f"{reader} expects {NAMES[magic]}, but got {describe(view)}; "
            "load the file with the recorder that wrote it"
        )
    if len(view) < OVERHEAD:
        raise RecordCorruptedError(f"{reader}: record truncated to {len(view)} bytes")
    _, version, flags = _HEAD.unpack_from(view, 0)
    if version != FRAME_VERSION:
        raise RecordVersionError(
            f"{reader}: frame version {version} is not supported (this build reads version "
            f"{FRAME_VERSION}); upgrade burn-record to read it"
        )
    if flags != 0:
        raise RecordVersionError(f"{reader}: unknown frame flags {flags:#06x}; upgrade burn-record")
    size, crc, end = _TAIL.unpack_from(view, len(view) - _TAIL.size)
    if end != END_MARKER or size != len(view) - OVERHEAD:
        raise RecordCorruptedError(
            f"{reader}: record is truncated or has trailing data ({len(view)} bytes, "
            f"end marker {'ok' if end == END_MARKER else 'missing'})"
        )
    payload = view[_HEAD.size : len(view) - _TAIL.size]
    if zlib.crc32(payload) != crc:
        raise RecordCorruptedError(f"{reader}: checksum mismatch, the record is corrupted")
    return payload
