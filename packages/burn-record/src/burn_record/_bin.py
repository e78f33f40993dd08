"""Positional binary payload ("Bin" recorders): Burn's bincode role, self-describing for Python.

Bincode relies on Rust types to know the layout; a Python loader has no schema, so each value
carries
a one-byte tag, but struct fields (the metadata) are positional and nothing is padded or named
twice.
All integers are little-endian. Layout, version 1:

    payload  := str(float) str(int) str(format) u32(version) str(settings) value(item)
    str      := u32 byte length, UTF-8 bytes
    value    := u8 tag, body
      0x00 None          0x01 False          0x02 True
      0x03 int   i64     0x04 int   u64 (only values >= 2**63)     0x05 float f64
      0x06 str           0x07 list  u32 n, n values                0x08 tuple u32 n, n values
      0x09 dict  u32 n, n x (str key, value)
      0x0A tensor        0x0B param str id, tensor
    tensor   := u8 dtype code, u8 rank, rank x u64 dim, prod(dims) x itemsize raw element bytes
    dtype codes: F64=0 F32=1 F16=2 I64=3 I32=4 I16=5 I8=6 U8=7 BOOL=8
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

from ._dtypes import DTYPE_BY_CODE, DTYPE_CODE, TensorData
from ._errors import RecordCorruptedError, RecordDTypeError, UnsupportedItemError
from ._mpk import max_objects
from ._named import MAX_DEPTH, check_key, join, scalar
from ._param import ParamRecord
from ._record import Record
from ._settings import PrecisionSettings
from ._tensors import MAX_RANK, convert_for_save, tensor_buffer, tensor_from_buffer

NONE, FALSE, TRUE, INT, UINT, FLOAT, STR, LIST, TUPLE, DICT, TENSOR, PARAM = range(12)
_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")
_U64 = struct.Struct("<Q")
_F64 = struct.Struct("<d")
_FLUSH_BYTES = 1 << 16


def encode(
    meta: dict[str, Any], item: Any, settings: PrecisionSettings
) -> Iterator[bytes | memoryview]:
    """Yield the payload; large tensors are yielded as zero-copy views between small buffers."""
    buf = bytearray()
    for key in ("float", "int", "format"):
        _str(buf, meta[key])
    buf += _U32.pack(meta["version"])
    _str(buf, meta["settings"])
    yield from _value(buf, item, settings, "", 0)
    if buf:
        yield bytes(buf)


def _str(buf: bytearray, s: str) -> None:
    raw = s.encode("utf-8")
    buf += _U32.pack(len(raw))
    buf += raw


def _value(buf: bytearray, item: Any, settings, path: str, depth: int) -> Iterator:
    if depth > MAX_DEPTH:
        raise UnsupportedItemError(f"{path}: item nested deeper than {MAX_DEPTH} levels")
    if isinstance(item, ParamRecord):
        if getattr(item.value.dtype, "is_quantized", False):
            raise UnsupportedItemError(
                f"{path or '<root>'}: the binary format does not store quantized tensors; "
                "use NamedMpkFileRecorder (the default) or a JSON recorder"
            )
        buf.append(PARAM)
        _str(buf, item.id)
        yield from _tensor(buf, item.value, settings, path)
    elif isinstance(item, TensorData):
        buf.append(TENSOR)
        yield from _tensor(buf, item, settings, path)
    elif isinstance(item, dict):
        buf.append(DICT)
        buf += _U32.pack(len(item))
        for key, value in item.items():
            check_key(key, path)
            _str(buf, key)
            yield from _value(buf, value, settings, join(path, key), depth + 1)
    elif isinstance(item, list | tuple):
        buf.append(TUPLE if isinstance(item, tuple) else LIST)
        buf += _U32.pack(len(item))
        for i, value in enumerate(item):
            yield from _value(buf, value, settings, join(path, i), depth + 1)
    else:
        value = scalar(item, path)
        if value is None:
            buf.append(NONE)
        elif isinstance(value, bool):
            buf.append(TRUE if value else FALSE)
        elif isinstance(value, int) and value < 2**63:
            buf.append(INT)
            buf += _I64.pack(value)
        elif isinstance(value, int):
            buf.append(UINT)
            buf += _U64.pack(value)
        elif isinstance(value, float):
            buf.append(FLOAT)
            buf += _F64.pack(value)
        else:
            buf.append(STR)
            _str(buf, value)
    if len(buf) >= _FLUSH_BYTES:
        yield bytes(buf)
        buf.clear()


def _tensor(buf: bytearray, data: TensorData, settings, path: str) -> Iterator:
    data = convert_for_save(data, settings, path)
    shape = data.shape
    buf += bytes([DTYPE_CODE[data.dtype], len(shape)])
    for d in shape:
        buf += _U64.pack(d)
    view = tensor_buffer(data)
    if view.nbytes < _FLUSH_BYTES:
        buf += view
        return
    yield bytes(buf)
    buf.clear()
    yield view


class _Reader:
    """Cursor over the payload; every read is bounds-checked: bad input fails fast, never hangs."""

    def __init__(self, view: memoryview):
        self.view = view
        self.pos = 0
        self.limit = self.budget = max_objects()

    def spend(self, n: int, path: str) -> None:
        """Count n more containers/elements against the record's object budget."""
        self.budget -= n
        if self.budget < 0:
            raise RecordCorruptedError(
                f"{path or '<root>'}: more than {self.limit} containers and elements; a record "
                "of a module holds a few per tensor (BURN_RECORD_MAX_OBJECTS raises the limit)"
            )

    def take(self, n: int, path: str) -> memoryview:
        end = self.pos + n
        if end > len(self.view):
            raise RecordCorruptedError(f"{path or '<root>'}: binary record ends early")
        out = self.view[self.pos : end]
        self.pos = end
        return out

    def unpack(self, fmt: struct.Struct, path: str):
        return fmt.unpack(self.take(fmt.size, path))[0]

    def string(self, path: str) -> str:
        raw = self.take(self.unpack(_U32, path), path)
        try:
            return str(raw, "utf-8")
        except UnicodeDecodeError:
            raise RecordCorruptedError(f"{path or '<root>'}: invalid UTF-8 string") from None


def decode_header(payload: memoryview) -> tuple[dict[str, Any], _Reader]:
    """Parse the metadata; `decode_item(reader)` reads the item once the metadata is checked."""
    r = _Reader(payload)
    meta: dict[str, Any] = {k: r.string("metadata") for k in ("float", "int", "format")}
    meta["version"] = r.unpack(_U32, "metadata")
    meta["settings"] = r.string("metadata")
    return meta, r


def decode_item(r: _Reader) -> Any:
    """Read the item; tensors keep the dtype they were stored with."""
    item = _read(r, "", 0)
    if r.pos != len(r.view):
        raise RecordCorruptedError(f"{len(r.view) - r.pos} unexpected bytes after the item")
    return item


def _read(r: _Reader, path: str, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise RecordCorruptedError(f"{path}: record nested deeper than {MAX_DEPTH} levels")
    tag = r.take(1, path)[0]
    if tag == NONE:
        return None
    if tag in (FALSE, TRUE):
        return tag == TRUE
    if tag == INT:
        return r.unpack(_I64, path)
    if tag == UINT:
        return r.unpack(_U64, path)
    if tag == FLOAT:
        return r.unpack(_F64, path)
    if tag == STR:
        return r.string(path)
    if tag in (LIST, TUPLE):
        n = r.unpack(_U32, path)
        if n > len(r.view) - r.pos:  # every value takes at least one byte
            raise RecordCorruptedError(
                f"{path or '<root>'}: sequence length {n} exceeds the record"
            )
        r.spend(n + 1, path)
        values = [_read(r, join(path, i), depth + 1) for i in range(n)]
        return tuple(values) if tag == TUPLE else values
    if tag == DICT:
        n = r.unpack(_U32, path)
        if n > len(r.view) - r.pos:
            raise RecordCorruptedError(f"{path or '<root>'}: dict length {n} exceeds the record")
        r.spend(n + 1, path)
        out = {}
        for _ in range(n):
            key = r.string(path)
            out[key] = _read(r, join(path, key), depth + 1)
        return Record._of(out)
    if tag == TENSOR:
        return _read_tensor(r, path)
    if tag == PARAM:
        pid = r.string(path)
        return ParamRecord(pid, _read_tensor(r, path))
    raise RecordCorruptedError(f"{path or '<root>'}: unknown value tag {tag:#04x}")


def _read_tensor(r: _Reader, path: str) -> TensorData:
    code, rank = r.take(2, path)
    dtype = DTYPE_BY_CODE.get(code)
    if dtype is None:
        raise RecordDTypeError(f"{path or '<root>'}: unknown dtype code {code}")
    if rank > MAX_RANK:
        raise RecordCorruptedError(f"{path or '<root>'}: tensor rank {rank} is implausible")
    shape = struct.unpack(f"<{rank}Q", r.take(8 * rank, path))
    nbytes = dtype.size
    for d in shape:
        nbytes *= d
    return tensor_from_buffer(r.take(nbytes, path), shape, dtype, path)
