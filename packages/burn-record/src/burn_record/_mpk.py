"""Named MessagePack payload: the named tree (`_named`) packed with `msgpack`, streamed.

`msgpack.packb` would copy every tensor into one big buffer; instead, small values go through a
`msgpack.Packer` and each large tensor is emitted as a bin header plus a zero-copy view of its
elements, so a 400 MB model is written without an extra 400 MB copy.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import msgpack

from ._errors import RecordCorruptedError, UnsupportedItemError

# Below this size a tensor is cheaper to copy into the packer's buffer than to stream on its own.
_INLINE_BYTES = 1 << 16


def pack(obj: Any) -> Iterator[bytes | memoryview]:
    """Yield the msgpack encoding of a named tree (maps, lists, scalars, memoryview tensors)."""
    packer = msgpack.Packer(autoreset=False, use_bin_type=True)
    yield from _walk(obj, packer)
    tail = packer.bytes()
    if tail:
        yield tail


def _walk(obj: Any, packer: msgpack.Packer) -> Iterator[bytes | memoryview]:
    if isinstance(obj, dict):
        packer.pack_map_header(len(obj))
        for key, value in obj.items():
            packer.pack(key)
            yield from _walk(value, packer)
    elif isinstance(obj, list):
        packer.pack_array_header(len(obj))
        for value in obj:
            yield from _walk(value, packer)
    elif isinstance(obj, memoryview):
        if obj.nbytes < _INLINE_BYTES:
            packer.pack(obj.tobytes())
            return
        pending = packer.bytes()
        packer.reset()
        if pending:
            yield pending
        yield _bin_header(obj.nbytes)
        yield obj
    else:
        packer.pack(obj)


def _bin_header(n: int) -> bytes:
    # msgpack spec: bin 8 / bin 16 / bin 32, big-endian length.
    if n < 1 << 8:
        return struct.pack(">BB", 0xC4, n)
    if n < 1 << 16:
        return struct.pack(">BH", 0xC5, n)
    if n < 1 << 32:
        return struct.pack(">BI", 0xC6, n)
    raise UnsupportedItemError(
        f"a tensor of {n} bytes exceeds msgpack's 4 GiB limit; use a Bin recorder"
    )


def unpack(payload: memoryview) -> Any:
    """Decode a msgpack payload into the plain tree; malformed bytes raise RecordCorruptedError."""
    try:
        return msgpack.unpackb(payload, raw=False, strict_map_key=True, use_list=True)
    except (ValueError, TypeError, RecursionError, msgpack.exceptions.UnpackException) as err:
        raise RecordCorruptedError(f"malformed msgpack record: {err}") from None


def decode_bytes(value: Any, path: str) -> bytes:
    if not isinstance(value, bytes):
        raise RecordCorruptedError(f"{path or '<root>'}: tensor bytes are not a msgpack bin")
    return value
