"""The Burnpack file format of Burn 0.20's `burn-store` (`crates/burn-store/src/burnpack`).

Layout, all integers little-endian:

    offset 0   magic    u32  0x4255524E ("BURN"; the bytes read "NRUB")
    offset 4   version  u16  1
    offset 6   size     u32  length of the CBOR metadata that follows
    offset 10  metadata CBOR {"tensors": {name: {"dtype": "F32", "shape": [..],
                                "data_offsets": [start, end], "param_id"?: u64}},
                              "metadata"?: {key: value}}   (names in byte order)
    then zeros up to the next multiple of 256: the data section starts there
    data       each tensor's little-endian bytes at data start + `start`, every `start` a
               multiple of 256 (zero padding between), in the order the tensors were written

`write_burnpack` produces exactly what Burn's `BurnpackWriter` does (tests compare against the
header and metadata of a file written by Rust Burn); `BurnpackReader` checks every limit Burn's
reader checks (metadata size, tensor count, offsets inside the file) and more (dtype names,
byte counts against shapes), naming the file and the tensor.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from burn_record import atomic_write
from burn_tensor import DType, TensorData

from ._cbor import CborError, decode, encode

MAGIC = 0x4255524E
VERSION = 1
HEADER_SIZE = 10
ALIGNMENT = 256
MAX_METADATA_SIZE = 100 * 1024 * 1024
MAX_TENSOR_COUNT = 100_000
MAX_TENSOR_SIZE = 10 * 1024**3

# Burn's DType variant names <-> burn-py dtypes. Unsigned types burn-py lacks are widened
# losslessly on read (U16 -> I32, U32 -> I64; U64 -> I64 when every value fits).
_TO_BURN = {
    DType.F64: "F64", DType.F32: "F32", DType.F16: "F16", DType.BF16: "BF16",
    DType.I64: "I64", DType.I32: "I32", DType.I16: "I16", DType.I8: "I8",
    DType.U8: "U8", DType.BOOL: "Bool",
}  # fmt: skip
_FROM_BURN = {v: k for k, v in _TO_BURN.items()}
_WIDENED = {"U16": ("<u2", DType.I32), "U32": ("<u4", DType.I64), "U64": ("<u8", DType.I64)}
_ITEMSIZE = {**{v: k.size for k, v in _TO_BURN.items()}, "U16": 2, "U32": 4, "U64": 8, "Flex32": 4}


class BurnpackError(ValueError):
    """A Burnpack file or buffer that cannot be read or written (Burn's `BurnpackError`)."""


@dataclass(frozen=True)
class TensorDescriptor:
    """One entry of the tensor table: Burn dtype name, shape, byte range in the data section,
    and the parameter id (None when absent)."""

    dtype: str
    shape: tuple[int, ...]
    data_offsets: tuple[int, int]
    param_id: int | None = None


def aligned_data_start(metadata_size: int) -> int:
    """Where the data section starts: after header and metadata, up to a multiple of 256."""
    return -(-(HEADER_SIZE + metadata_size) // ALIGNMENT) * ALIGNMENT


def burn_dtype(dtype: DType) -> str:
    """Burn's name of a burn-py dtype (`DType.BOOL` -> "Bool")."""
    try:
        return _TO_BURN[dtype]
    except KeyError:
        raise BurnpackError(f"dtype {dtype!r} has no Burnpack name") from None


@dataclass(frozen=True)
class Entry:
    """What the writer needs of one tensor: its name, data and parameter id."""

    name: str
    data: TensorData
    param_id: int | None = None


def _layout(entries: list[Entry], metadata: Mapping[str, str]) -> tuple[bytes, list[int]]:
    """(header + metadata bytes, each entry's start in the data section)."""
    names = [e.name for e in entries]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise BurnpackError(f"tensor names must be unique, got duplicates {dup}")
    table: dict[str, dict[str, Any]] = {}
    starts, cursor = [], 0
    for e in entries:
        start = -(-cursor // ALIGNMENT) * ALIGNMENT
        end = start + _nbytes(e.data)
        desc: dict[str, Any] = {
            "dtype": burn_dtype(e.data.dtype),
            "shape": [int(d) for d in e.data.shape],
            "data_offsets": [start, end],
        }
        if e.param_id is not None:
            desc["param_id"] = int(e.param_id) & (2**64 - 1)
        table[e.name] = desc
        starts.append(start)
        cursor = end
    meta: dict[str, Any] = {"tensors": {k: table[k] for k in sorted(table, key=_key)}}
    if metadata:
        meta["metadata"] = {k: str(metadata[k]) for k in sorted(metadata, key=_key)}
    raw = encode(meta)
    head = struct.pack("<IHI", MAGIC, VERSION, len(raw)) + raw
    return head + bytes(aligned_data_start(len(raw)) - len(head)), starts


def _key(name: str) -> bytes:
    return name.encode("utf-8")  # Rust's BTreeMap<String, _> orders keys by their bytes


def _nbytes(data: TensorData) -> int:
    numel = int(np.prod(list(data.shape), dtype=np.int64))
    return numel * (1 if data.dtype is DType.BOOL else data.dtype.size)


def _raw(data: TensorData) -> bytes:
    if data.dtype is DType.BOOL:  # Burn stores a bool as one byte, 0 or 1
        return np.asarray(data.numpy(), dtype=np.uint8).tobytes()
    return data.bytes


def _write(f: BinaryIO, entries: list[Entry], metadata: Mapping[str, str]) -> None:
    head, starts = _layout(entries, metadata)
    f.write(head)
    cursor = 0
    for e, start in zip(entries, starts, strict=True):
        f.write(bytes(start - cursor))
        raw = _raw(e.data)
        f.write(raw)
        cursor = start + len(raw)


def write_burnpack(
    entries: Iterable[Entry], metadata: Mapping[str, str] | None = None
) -> bytes:
    """The Burnpack bytes of `entries` (written in that order) and string `metadata`.

    Example:
        >>> raw = write_burnpack([Entry("w", TensorData([1.0, 2.0]), 7)])
        >>> raw[:4], len(raw), BurnpackReader(raw).read("w").tolist()
        (b'NRUB', 264, [1.0, 2.0])
    """
    import io

    buf = io.BytesIO()
    _write(buf, list(entries), metadata or {})
    return buf.getvalue()


def write_burnpack_file(
    path: str | os.PathLike, entries: Iterable[Entry], metadata: Mapping[str, str] | None = None
) -> Path:
    """`write_burnpack` into `path`, atomically (burn_record's `atomic_write`)."""
    entries = list(entries)
    return atomic_write(path, lambda f: _write(f, entries, metadata or {}))


class BurnpackReader:
    """Reads a Burnpack file or buffer; `descriptors` (name -> `TensorDescriptor`, table
    order), `metadata`, `read(name) -> TensorData`.

    Args:
        source: the bytes, or a path (read whole).
        name: how messages name the source (default: the path, or "<bytes>").
    """

    def __init__(self, source: bytes | bytearray | memoryview | str | os.PathLike, name=None):
        if isinstance(source, (str, os.PathLike)):
            path = Path(source)
            self.name = name or str(path)
            if not path.is_file():
                raise FileNotFoundError(f"Burnpack file not found: {path}")
            source = path.read_bytes()
        else:
            self.name = name or "<bytes>"
        self._bytes = memoryview(bytes(source))
        self.version, self.descriptors, self.metadata, self.data_start = self._parse()

    def _fail(self, message: str) -> BurnpackError:
        return BurnpackError(f"{self.name}: {message}")

    def _parse(self) -> tuple[int, dict[str, TensorDescriptor], dict[str, str], int]:
        buf = self._bytes
        if len(buf) < HEADER_SIZE:
            raise self._fail(f"{len(buf)} bytes: too short for the {HEADER_SIZE}-byte header")
        magic, version, size = struct.unpack("<IHI", buf[:HEADER_SIZE])
        if magic != MAGIC:
            raise self._fail(
                f"not a Burnpack file (magic {bytes(buf[:4])!r}, expected b'NRUB')"
            )
        if version > VERSION:
            raise self._fail(f"format version {version} is newer than the supported {VERSION}")
        if size > MAX_METADATA_SIZE:
            raise self._fail(f"metadata size {size} exceeds the limit {MAX_METADATA_SIZE}")
        if HEADER_SIZE + size > len(buf):
            raise self._fail(
                f"truncated: the metadata needs {size} bytes, {len(buf) - HEADER_SIZE} follow"
            )
        try:
            meta = decode(buf[HEADER_SIZE : HEADER_SIZE + size])
        except CborError as err:
            raise self._fail(f"metadata is not valid CBOR ({err})") from None
        if not isinstance(meta, dict) or not isinstance(meta.get("tensors"), dict):
            raise self._fail("metadata has no 'tensors' map")
        tensors = meta["tensors"]
        if len(tensors) > MAX_TENSOR_COUNT:
            raise self._fail(f"{len(tensors)} tensors exceed the limit {MAX_TENSOR_COUNT}")
        extra = meta.get("metadata", {})
        if not isinstance(extra, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in extra.items()
        ):
            raise self._fail("'metadata' must map strings to strings")
        start = aligned_data_start(size)
        descriptors = {name: self._descriptor(name, d, start) for name, d in tensors.items()}
        return version, descriptors, dict(extra), start

    def _descriptor(self, name: Any, d: Any, data_start: int) -> TensorDescriptor:
        if not isinstance(name, str) or not isinstance(d, dict):
            raise self._fail(f"tensor entry {name!r} is not a name -> descriptor pair")
        where = f"tensor {name!r}"
        dtype, shape, offsets = d.get("dtype"), d.get("shape"), d.get("data_offsets")
        if not isinstance(dtype, str):
            raise self._fail(f"{where}: dtype {dtype!r} is not supported (quantized tensors are not)")
        if dtype not in _ITEMSIZE:
            raise self._fail(f"{where}: unknown dtype {dtype!r}")
        if not isinstance(shape, list) or not all(isinstance(s, int) and s >= 0 for s in shape):
            raise self._fail(f"{where}: shape {shape!r} is not a list of sizes")
        if not (
            isinstance(offsets, list)
            and len(offsets) == 2
            and all(isinstance(o, int) and o >= 0 for o in offsets)
            and offsets[0] <= offsets[1]
        ):
            raise self._fail(f"{where}: data_offsets {offsets!r} is not a [start, end] range")
        numel = int(np.prod(shape, dtype=object)) if shape else 1
        nbytes = offsets[1] - offsets[0]
        if nbytes > MAX_TENSOR_SIZE:
            raise self._fail(f"{where}: {nbytes} bytes exceed the limit {MAX_TENSOR_SIZE}")
        if nbytes != numel * _ITEMSIZE[dtype]:
            raise self._fail(
                f"{where}: {nbytes} bytes for shape {shape} of {dtype} (needs "
                f"{numel * _ITEMSIZE[dtype]})"
            )
        if data_start + offsets[1] > len(self._bytes):
            raise self._fail(
                f"{where}: data ends at byte {data_start + offsets[1]} but the file has "
                f"{len(self._bytes)} (truncated)"
            )
        pid = d.get("param_id")
        if pid is not None and not (isinstance(pid, int) and 0 <= pid < 2**64):
            raise self._fail(f"{where}: param_id {pid!r} is not a u64")
        return TensorDescriptor(dtype, tuple(shape), (offsets[0], offsets[1]), pid)

    def read(self, name: str) -> TensorData:
        """The tensor `name` as `TensorData` (a copy; unsigned types burn-py lacks widened)."""
        d = self.descriptors.get(name)
        if d is None:
            raise KeyError(f"{self.name}: no tensor {name!r}")
        raw = self._bytes[self.data_start + d.data_offsets[0] : self.data_start + d.data_offsets[1]]
        if d.dtype == "Bool":
            arr = np.frombuffer(raw, np.uint8)
            if (arr > 1).any():
                raise self._fail(f"tensor {name!r}: bool bytes must be 0 or 1")
            return TensorData(arr.astype(bool).reshape(d.shape))
        if d.dtype in _WIDENED:
            fmt, target = _WIDENED[d.dtype]
            arr = np.frombuffer(raw, fmt)
            if d.dtype == "U64" and (arr > np.iinfo(np.int64).max).any():
                raise self._fail(f"tensor {name!r}: U64 values above the I64 range")
            return TensorData(arr.astype(target.np).reshape(d.shape))
        dtype = DType.F32 if d.dtype == "Flex32" else _FROM_BURN[d.dtype]
        return TensorData.from_bytes(bytes(raw), d.shape, dtype)
