"""The CBOR subset of Burnpack metadata (RFC 8949), encoded as Rust's `ciborium` does.

Burnpack's metadata is a serde struct serialized by ciborium: maps with text keys in the
struct's field order (BTreeMaps in key order), definite lengths, integers in their shortest
form, text strings. `encode` writes that; `decode` reads any well-formed CBOR of the same major
types (plus floats, bools, null and byte strings) with a nesting limit and no allocation beyond
the input's size, so a hostile file cannot exhaust memory or the stack.
"""

from __future__ import annotations

import struct
from typing import Any

MAX_DEPTH = 128  # Burn's MAX_CBOR_RECURSION_DEPTH


class CborError(ValueError):
    """Malformed or unsupported CBOR (the message says where)."""


def _head(major: int, value: int) -> bytes:
    if value < 24:
        return bytes([major << 5 | value])
    for info, fmt, limit in ((24, ">B", 1 << 8), (25, ">H", 1 << 16), (26, ">I", 1 << 32)):
        if value < limit:
            return bytes([major << 5 | info]) + struct.pack(fmt, value)
    if value < 1 << 64:
        return bytes([major << 5 | 27]) + struct.pack(">Q", value)
    raise CborError(f"integer {value} does not fit in 64 bits")


def encode(value: Any) -> bytes:
    """CBOR bytes of ints, str, bytes, bool, None, float, list/tuple and dict (insertion order).

    Example:
        >>> encode({"a": [1, 500]}).hex()
        'a1616182011901f4'
    """
    out = bytearray()
    _encode(value, out)
    return bytes(out)


def _encode(value: Any, out: bytearray) -> None:
    if value is True or value is False:
        out.append(0xF5 if value else 0xF4)
    elif value is None:
        out.append(0xF6)
    elif isinstance(value, int):
        out += _head(0, value) if value >= 0 else _head(1, -1 - value)
    elif isinstance(value, float):
        out += b"\xfb" + struct.pack(">d", value)
    elif isinstance(value, str):
        raw = value.encode("utf-8")
        out += _head(3, len(raw)) + raw
    elif isinstance(value, (bytes, bytearray)):
        out += _head(2, len(value)) + bytes(value)
    elif isinstance(value, (list, tuple)):
        out += _head(4, len(value))
        for item in value:
            _encode(item, out)
    elif isinstance(value, dict):
        out += _head(5, len(value))
        for k, v in value.items():
            _encode(k, out)
            _encode(v, out)
    else:
        raise CborError(f"cannot encode {type(value).__name__} as CBOR")


def decode(data: bytes) -> Any:
    """The value of a CBOR item that spans exactly `data`.

    Example:
        >>> decode(bytes.fromhex("a1616182011901f4"))
        {'a': [1, 500]}
    """
    view = memoryview(bytes(data))
    value, end = _decode(view, 0, 0)
    if end != len(view):
        raise CborError(f"{len(view) - end} trailing bytes after the CBOR item (at byte {end})")
    return value


def _need(view: memoryview, pos: int, n: int) -> None:
    if n < 0 or pos + n > len(view):
        raise CborError(f"truncated CBOR: {n} bytes needed at byte {pos}, {len(view) - pos} left")


def _decode(view: memoryview, pos: int, depth: int) -> tuple[Any, int]:
    if depth > MAX_DEPTH:
        raise CborError(f"CBOR nesting deeper than {MAX_DEPTH} levels")
    _need(view, pos, 1)
    first = view[pos]
    major, info = first >> 5, first & 31
    pos += 1
    if major == 7:
        return _simple(view, pos, info)
    if info < 24:
        arg = info
    elif info in (24, 25, 26, 27):
        n = 1 << (info - 24)
        _need(view, pos, n)
        arg = int.from_bytes(view[pos : pos + n], "big")
        pos += n
    else:
        raise CborError(
            f"unsupported CBOR length encoding {info} at byte {pos - 1} (indefinite lengths are "
            "not used by Burnpack)"
        )
    if major == 0:
        return arg, pos
    if major == 1:
        return -1 - arg, pos
    if major in (2, 3):
        _need(view, pos, arg)
        raw = bytes(view[pos : pos + arg])
        if major == 2:
            return raw, pos + arg
        try:
            return raw.decode("utf-8"), pos + arg
        except UnicodeDecodeError:
            raise CborError(f"invalid UTF-8 in a CBOR text string at byte {pos}") from None
    if major == 4:
        _need(view, pos, arg)  # each item takes at least one byte: bounds the allocation
        items = []
        for _ in range(arg):
            item, pos = _decode(view, pos, depth + 1)
            items.append(item)
        return items, pos
    if major == 5:
        _need(view, pos, 2 * arg)
        result: dict[Any, Any] = {}
        for _ in range(arg):
            key, pos = _decode(view, pos, depth + 1)
            if isinstance(key, (list, dict)):
                raise CborError(f"unhashable CBOR map key before byte {pos}")
            value, pos = _decode(view, pos, depth + 1)
            result[key] = value
        return result, pos
    raise CborError(f"CBOR tags (major type 6) are not used by Burnpack (at byte {pos - 1})")


def _simple(view: memoryview, pos: int, info: int) -> tuple[Any, int]:
    if info == 20:
        return False, pos
    if info == 21:
        return True, pos
    if info in (22, 23):
        return None, pos
    if info in (25, 26, 27):
        n, fmt = {25: (2, ">e"), 26: (4, ">f"), 27: (8, ">d")}[info]
        _need(view, pos, n)
        return struct.unpack(fmt, view[pos : pos + n])[0], pos + n
    raise CborError(f"unsupported CBOR simple value {info} at byte {pos - 1}")
