"""Named MessagePack payload: the named tree (`_named`) packed with `msgpack`, streamed.

`msgpack.packb` would copy every tensor into one big buffer; instead, small values go through a
`msgpack.Packer` and each large tensor is emitted as a bin header plus a zero-copy view of its
elements, so a 400 MB model is written without an extra 400 MB copy.
"""

from __future__ import annotations

import os
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
    """Decode a msgpack payload into the plain tree; malformed bytes raise RecordCorruptedError.

    `msgpack.unpackb` would copy every `bin` into a new `bytes` object, and the tensor loader then
    copies it again into a writable array: two fresh buffers per tensor, which page-faults twice
    (the dominant cost of loading a large model on some hosts). This reader walks the same
    msgpack in Python and returns every `bin` as a zero-copy `memoryview` slice of `payload`, so a
    tensor's elements are copied once, into their final array. A record is a small tree of
    containers around few large bins, so walking it in Python costs microseconds per tensor.
    Everything msgpack allows and a record never holds (ext types, non-str keys, invalid UTF-8,
    trailing bytes) is refused as RecordCorruptedError.
    """
    view = memoryview(payload)
    if view.format != "B" or view.ndim != 1:
        view = view.cast("B")
    try:
        limit = max_objects()
        obj, pos = _read(view, 0, 0, [limit, limit])
    except RecordCorruptedError:
        raise
    except (ValueError, RecursionError) as err:  # invalid UTF-8 is a ValueError
        raise RecordCorruptedError(f"malformed msgpack record: {err}") from None
    if pos != len(view):
        raise RecordCorruptedError(f"malformed msgpack record: {len(view) - pos} trailing bytes")
    return obj


# A record never nests this deep (`_named.MAX_DEPTH` is lower); hostile input cannot recurse past it.
_MAX_NESTING = 512
# Python objects cost ~50-100 bytes each where msgpack spends one: a 29 MiB file of 10M empty maps
# built 3.9 GiB of dicts. A module's record holds a few containers per tensor, so 2^19 of them (at
# most ~50 MiB of objects) is far above any real record and far below any memory worry.
MAX_OBJECTS = 1 << 19
_U8 = struct.Struct(">B")
_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")
_U64 = struct.Struct(">Q")
_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_F32 = struct.Struct(">f")
_F64 = struct.Struct(">d")
_FIXED = {  # type byte -> (struct, value) for fixed-size scalars
    0xCA: _F32,
    0xCB: _F64,
    0xCC: _U8,
    0xCD: _U16,
    0xCE: _U32,
    0xCF: _U64,
    0xD0: _I8,
    0xD1: _I16,
    0xD2: _I32,
    0xD3: _I64,
}
_LEN = {  # type byte -> (length struct, kind)
    0xC4: (_U8, "bin"),
    0xC5: (_U16, "bin"),
    0xC6: (_U32, "bin"),
    0xD9: (_U8, "str"),
    0xDA: (_U16, "str"),
    0xDB: (_U32, "str"),
    0xDC: (_U16, "array"),
    0xDD: (_U32, "array"),
    0xDE: (_U16, "map"),
    0xDF: (_U32, "map"),
}


def _bad(msg: str) -> RecordCorruptedError:
    return RecordCorruptedError(f"malformed msgpack record: {msg}")


def max_objects() -> int:
    """How many containers and elements one record may hold (BURN_RECORD_MAX_OBJECTS, default
    2^19). burn_import bounds the tree of a `.pt` file by the same number.

    Example:
        >>> max_objects() >= 1
        True
    """
    value = os.environ.get("BURN_RECORD_MAX_OBJECTS", "").strip()
    if not value:
        return MAX_OBJECTS
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"BURN_RECORD_MAX_OBJECTS must be a positive integer, got {value!r}")
    return int(value)


def _read(view: memoryview, pos: int, depth: int, budget: list[int]) -> tuple[Any, int]:
    end = len(view)
    if pos >= end:
        raise _bad("truncated")
    b = view[pos]
    pos += 1
    if b <= 0x7F:
        return b, pos
    if b >= 0xE0:
        return b - 0x100, pos
    if 0xA0 <= b <= 0xBF:
        kind, n = "str", b & 0x1F
    elif 0x90 <= b <= 0x9F:
        kind, n = "array", b & 0x0F
    elif 0x80 <= b <= 0x8F:
        kind, n = "map", b & 0x0F
    elif b == 0xC0:
        return None, pos
    elif b == 0xC2:
        return False, pos
    elif b == 0xC3:
        return True, pos
    elif b in _FIXED:
        st = _FIXED[b]
        if pos + st.size > end:
            raise _bad("truncated")
        return st.unpack_from(view, pos)[0], pos + st.size
    elif b in _LEN:
        st, kind = _LEN[b]
        if pos + st.size > end:
            raise _bad("truncated")
        n = st.unpack_from(view, pos)[0]
        pos += st.size
    else:
        raise _bad(f"unsupported msgpack type byte {b:#04x}")
    if kind == "bin" or kind == "str":
        if pos + n > end:
            raise _bad("truncated")
        chunk = view[pos : pos + n]
        return (chunk if kind == "bin" else str(chunk, "utf-8")), pos + n
    if depth >= _MAX_NESTING:
        raise _bad(f"nested deeper than {_MAX_NESTING} levels")
    # Every element takes at least one byte (two per map entry): refuse impossible counts before
    # allocating anything for them.
    if n * (2 if kind == "map" else 1) > end - pos:
        raise _bad("truncated")
    budget[0] -= n + 1
    if budget[0] < 0:
        raise _bad(
            f"more than {budget[1]} containers and elements; a record of a "
            "module holds a few per tensor (BURN_RECORD_MAX_OBJECTS raises the limit)"
        )
    if kind == "array":
        out = []
        for _ in range(n):
            value, pos = _read(view, pos, depth + 1, budget)
            out.append(value)
        return out, pos
    obj = {}
    for _ in range(n):
        key, pos = _read(view, pos, depth + 1, budget)
        if not isinstance(key, str):
            raise _bad(f"non-str map key {key!r:.40}")
        obj[key], pos = _read(view, pos, depth + 1, budget)
    return obj, pos


def decode_bytes(value: Any, path: str) -> bytes | memoryview:
    if not isinstance(value, bytes | memoryview):
        raise RecordCorruptedError(f"{path or '<root>'}: tensor bytes are not a msgpack bin")
    return value
