"""The safetensors format, read and written with numpy alone.

Layout: an 8-byte little-endian header length `N`, `N` bytes of UTF-8 JSON
(`{"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
"__metadata__": {str: str}}`), then the data buffer, which the tensors must cover exactly (no
holes, no overlaps), offsets relative to its start. Reads memory-map the file and copy each tensor
out, but only after every offset has been checked against the file's actual size, so a truncated
file is a clear error instead of a SIGBUS on a page past its end.
"""

from __future__ import annotations

import json
import math
import mmap
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from burn_record import atomic_write
from burn_tensor import DType, TensorData

from ._dtypes import RAW, SAFETENSORS_CODE, SAFETENSORS_DTYPE, check_supported, itemsize, to_burn
from ._errors import RecordImportError
from ._limits import Budget, empty

MAX_HEADER = 100_000_000  # the reference implementation's limit
MAX_RANK = 64


def read_safetensors(
    path: str | os.PathLike,
) -> tuple[dict[str, TensorData], dict[str, str], dict[str, str]]:
    """Every tensor of a safetensors file, in file order.

    Returns:
        `(tensors, metadata, stored_dtypes)`: tensors as `TensorData` of Burn dtypes (bf16 widened
        to f32 exactly), the `__metadata__` strings, and torch's name of each stored dtype.
    """
    path = Path(path)
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise RecordImportError(f"{path}: no such file") from None
    except OSError as err:  # a directory, no permission, ...
        raise RecordImportError(f"{path}: cannot open ({err.strerror or err})") from None
    with f:
        try:
            return _read_open(f, path.name)
        except RecordImportError:
            raise
        except OSError as err:
            raise RecordImportError(f"{path}: cannot read ({err.strerror or err})") from None
        except MemoryError:
            raise RecordImportError(f"{path.name}: out of memory while reading it") from None


def _read_open(f: Any, name: str):
    size = os.fstat(f.fileno()).st_size
    if size < 8:
        raise RecordImportError(
            f"{name}: file is {size} bytes, shorter than the 8-byte header length"
        )
    buf = _map(f, size)
    view = memoryview(buf)
    try:
        return _parse(view, size, name)
    finally:
        try:
            view.release()
            if isinstance(buf, mmap.mmap):
                buf.close()
        except BufferError:  # a traceback still holds an array of it; closed when freed
            pass


def _map(f: Any, size: int) -> mmap.mmap | bytes:
    try:
        if hasattr(mmap, "MAP_SHARED"):  # POSIX: pre-fault the pages, we read them all
            flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
            return mmap.mmap(f.fileno(), size, flags=flags, prot=mmap.PROT_READ)
        return mmap.mmap(f.fileno(), size, access=mmap.ACCESS_READ)
    except (OSError, ValueError, OverflowError):  # a pipe or a file system without mmap
        return f.read()


def _parse(view: memoryview, size: int, name: str):
    """Validate the header against the file size, then copy every tensor out of `view`."""
    n = int.from_bytes(view[:8], "little")
    if n > MAX_HEADER or 8 + n > size:
        raise RecordImportError(f"{name}: header length {n} does not fit a file of {size} bytes")
    text = bytes(view[8 : 8 + n])
    Budget(size, "header's tensors").charge(header_cost(text), f"{name}: the header")
    header = _header(text, name)
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise RecordImportError(f"{name}: __metadata__ must map strings to strings")
    start, data_len = 8 + n, size - 8 - n
    specs = {key: _spec(key, entry, name) for key, entry in header.items()}
    _check_coverage(specs, data_len, name)
    tensors, dtypes = {}, {}
    for key, (dtype, shape, begin, _end) in specs.items():
        check_supported(dtype, f"{name}: {key}")
        count = math.prod(shape)
        raw = np.frombuffer(view, RAW[dtype], count, start + begin) if count else None
        raw = raw.reshape(shape) if count else empty(shape, RAW[dtype], f"{name}: {key}")
        tensors[key] = TensorData(to_burn(raw, dtype, f"{name}: {key}"))
        dtypes[key] = dtype
        del raw  # the mapping can only close once no array points into it
    return tensors, metadata, dtypes


# What one tensor entry of the header costs once parsed and loaded: its JSON dict and lists, its
# validated spec, its TensorData and array, and its share of the header text (measured: one
# million zero-size tensors, a 67 MB header, took 1.23 GiB). Metadata is flat (str -> str), so
# an honest header has one `{` per tensor; `[` and `,` bound every other JSON value.
ENTRY_COST = 1280
VALUE_COST = 64


def header_cost(text: bytes) -> int:
    """An upper estimate of the memory that parsing and loading a header costs, from a count of
    its JSON punctuation (counted in C, before any object is built).

    Example:
        >>> header_cost(b'{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}')
        2880
    """
    values = text.count(b"[") + text.count(b",")
    return ENTRY_COST * text.count(b"{") + VALUE_COST * values


def _header(text: bytes, name: str) -> dict[str, Any]:
    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) != len(pairs):
            raise RecordImportError(f"{name}: duplicate key in the header")
        return out

    try:
        header = json.loads(text.decode("utf-8"), object_pairs_hook=no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        if isinstance(err, RecordImportError):
            raise
        raise RecordImportError(f"{name}: the header is not valid JSON ({err})") from None
    if not isinstance(header, dict):
        raise RecordImportError(f"{name}: the header must be a JSON object")
    return header


def _spec(key: str, entry: Any, name: str) -> tuple[str, tuple[int, ...], int, int]:
    where = f"{name}: tensor {key!r}"
    if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
        raise RecordImportError(f"{where}: needs exactly dtype, shape and data_offsets")
    code, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if not isinstance(code, str) or code not in SAFETENSORS_DTYPE:
        raise RecordImportError(f"{where}: unknown dtype {code!r:.20}")
    if (
        not isinstance(shape, list)
        or len(shape) > MAX_RANK
        or not all(type(d) is int and d >= 0 for d in shape)
    ):
        raise RecordImportError(f"{where}: malformed shape {shape!r:.80}")
    if not (
        isinstance(offsets, list)
        and len(offsets) == 2
        and all(type(o) is int and o >= 0 for o in offsets)
        and offsets[0] <= offsets[1]
    ):
        raise RecordImportError(f"{where}: malformed data_offsets {offsets!r:.80}")
    dtype = SAFETENSORS_DTYPE[code]
    nbytes = math.prod(shape) * itemsize(dtype)
    if offsets[1] - offsets[0] != nbytes:
        raise RecordImportError(
            f"{where}: {code}{shape} needs {nbytes} bytes, data_offsets give "
            f"{offsets[1] - offsets[0]}"
        )
    return dtype, tuple(shape), offsets[0], offsets[1]


def _check_coverage(specs: dict[str, tuple], data_len: int, name: str) -> None:
    """The tensors must tile the data buffer exactly: no hole, no overlap, nothing past its end."""
    cursor = 0
    for key, (_dt, _shape, begin, end) in sorted(specs.items(), key=lambda kv: kv[1][2:]):
        if begin != cursor:
            what = "overlaps the previous tensor" if begin < cursor else "leaves a hole before it"
            raise RecordImportError(f"{name}: tensor {key!r} at byte {begin} {what}")
        cursor = end
    if cursor != data_len:
        raise RecordImportError(
            f"{name}: the tensors cover {cursor} data bytes but the file holds {data_len} "
            f"({'truncated' if cursor > data_len else 'trailing bytes'})"
        )


def write_safetensors(
    tensors: Mapping[str, TensorData | np.ndarray],
    path: str | os.PathLike,
    metadata: Mapping[str, str] | None = None,
) -> Path:
    """Write `tensors` as a safetensors file, atomically (`burn_record.atomic_write`: a random
    O_EXCL temp file, then a rename); returns the path.

    Tensors are laid out by decreasing element size, then by name, after a header padded with
    spaces to a multiple of 8 bytes, so every tensor is aligned to its element size.

    Example:
        >>> import tempfile
        >>> p = write_safetensors({"w": TensorData([[1.0, 2.0]])}, tempfile.mkdtemp() + "/a.st")
        >>> t, meta, _ = read_safetensors(p)
        >>> t["w"].tolist(), meta
        ([[1.0, 2.0]], {})
    """
    arrays = {}
    for key, value in tensors.items():
        if not isinstance(key, str):
            raise TypeError(f"safetensors keys must be str, got {key!r}")
        data = value if isinstance(value, TensorData) else TensorData(np.asarray(value))
        arrays[key] = data.array
    header: dict[str, Any] = {}
    if metadata:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise TypeError("safetensors metadata must map str to str")
        header["__metadata__"] = dict(metadata)
    order = sorted(arrays, key=lambda k: (-arrays[k].dtype.itemsize, k))
    offset = 0
    for key in order:
        arr = arrays[key]
        code = SAFETENSORS_CODE[DType.from_any(arr.dtype).value]
        header[key] = {
            "dtype": code,
            "shape": list(arr.shape),
            "data_offsets": [offset, offset + arr.nbytes],
        }
        offset += arr.nbytes
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)

    def write(f: Any) -> None:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for key in order:
            arr = arrays[key]
            f.write(np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).data)

    return atomic_write(Path(path), write)
