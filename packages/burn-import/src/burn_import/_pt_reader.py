"""Reading `.pt` / `.pth` files without torch: the zip format (torch >= 1.6) and the legacy one.

Zip format: `<archive>/data.pkl` (the pickle), `<archive>/data/<key>` (one member per storage,
raw bytes), `<archive>/byteorder` (`little`/`big`; absent before torch 1.10, meaning little).
Legacy format (`torch.save(..., _use_new_zipfile_serialization=False)`): five pickles in a row
(magic number, protocol version, system info, the object, the sorted storage keys), then for each
key an int64 element count and the storage's raw little-endian bytes.

Both end in the same object tree, whose `TensorRef`s are then materialized into `TensorData`.

What a file may cost is bounded by its size (`_limits`): the objects its pickles build, the
nodes of the tree once shared references are expanded into paths, and the bytes of the tensors
materialized from its storages are each charged to a budget of `FLOOR + ratio x file size`.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path
from typing import Any

from burn_record import max_objects
from burn_tensor import TensorData

from ._dtypes import itemsize
from ._errors import RecordImportError, UnsafePickleError
from ._limits import Budget
from ._pt_refs import StorageRef, TensorRef, materialize
from ._unpickler import safe_load_at, safe_loads

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001
MAX_DEPTH = 200
# A compressed zip member may expand at most this much (torch stores members uncompressed).
MAX_ZIP_RATIO = 1000


def read_pt(path: str | os.PathLike) -> tuple[Any, dict[str, str]]:
    """The object saved in a `.pt` file, tensors as `TensorData`, plus each tensor's stored dtype.

    Returns:
        `(obj, source_dtypes)`: `obj` is the saved tree (dicts, lists, tuples, scalars, strings,
        `TensorData`); `source_dtypes` maps each tensor's dotted path to torch's dtype name.
    """
    path = Path(path)
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise RecordImportError(f"{path}: no such file") from None
    except OSError as err:  # a directory, no permission, ...
        raise RecordImportError(f"{path}: cannot open ({err.strerror or err})") from None
    kind = "file"
    with f:
        try:
            size = os.fstat(f.fileno()).st_size
            head = f.read(4)
            f.seek(0)
            if head[:2] == b"PK":
                kind = "zip"
                return _read_zip(f, path.name, size)
            data = f.read()
            if len(data) >= 262 and data[257:262] == b"ustar":
                raise RecordImportError(
                    f"{path.name}: the tar format of PyTorch < 0.1.10 is not supported; re-save "
                    "the weights with a newer torch"
                )
            return _read_legacy(data, path.name)
        except RecordImportError:
            raise
        except OSError as err:
            raise RecordImportError(f"{path}: cannot read ({err.strerror or err})") from None
        except Exception as err:  # noqa: BLE001 - zipfile reports damage through many types
            raise RecordImportError(
                f"{path.name}: unreadable {kind} ({type(err).__name__}: {err})"
            ) from None


def _read_zip(f: Any, name: str, size: int) -> tuple[Any, dict[str, str]]:
    with zipfile.ZipFile(f) as zf:
        infos = {i.filename: i for i in zf.infolist()}
        pickles = [n for n in infos if n.endswith("/data.pkl") and n.count("/") == 1]
        if len(pickles) != 1:
            raise RecordImportError(
                f"{name}: a PyTorch zip holds exactly one <archive>/data.pkl, found {len(pickles)}"
            )
        prefix = pickles[0][: -len("data.pkl")]

        def member(entry: str) -> bytes:
            info = infos.get(prefix + entry)
            if info is None:
                raise RecordImportError(f"{name}: missing zip member {prefix + entry!r}")
            if info.compress_type != zipfile.ZIP_STORED and info.file_size > MAX_ZIP_RATIO * (
                info.compress_size + 1024
            ):
                raise RecordImportError(f"{name}: zip member {info.filename!r} expands too much")
            return zf.read(info)

        order = member("byteorder").strip() if prefix + "byteorder" in infos else b"little"
        if order not in (b"little", b"big"):
            raise RecordImportError(f"{name}: unknown byteorder {order[:20]!r}")
        storages: dict[str, StorageRef] = {}
        where = f"{name}: data.pkl"
        obj = safe_loads(member("data.pkl"), where, storages, _objects_budget(size))
        buffers: dict[str, bytes] = {}

        def buffer(ref: StorageRef) -> bytes:
            if ref.key not in buffers:
                data = member(f"data/{ref.key}")
                _check_size(ref, len(data), name)
                buffers[ref.key] = data
            return buffers[ref.key]

        return _resolve(obj, buffer, order == b"big", name, size)


def _check_size(ref: StorageRef, nbytes: int, name: str) -> None:
    expected = ref.numel * itemsize(ref.dtype)
    if ref.view is None and nbytes != expected:
        raise RecordImportError(
            f"{name}: storage {ref.key!r} has {nbytes} bytes; its {ref.dtype}[{ref.numel}] "
            f"needs {expected}"
        )


def _read_legacy(data: bytes, name: str) -> tuple[Any, dict[str, str]]:
    where = f"{name} (legacy format)"
    budget = _objects_budget(len(data))  # one for the file's five pickles
    try:
        magic, pos = safe_load_at(data, 0, where, None, budget)
    except UnsafePickleError:
        raise
    except RecordImportError as err:
        raise RecordImportError(
            f"{name}: not a PyTorch file, neither a zip archive nor a legacy pickle ({err})"
        ) from None
    if magic != LEGACY_MAGIC:
        raise RecordImportError(f"{name}: not a PyTorch file (bad magic number)")
    protocol, pos = safe_load_at(data, pos, where, None, budget)
    if protocol != LEGACY_PROTOCOL:
        raise RecordImportError(f"{where}: unsupported protocol version {protocol!r:.40}")
    sys_info, pos = safe_load_at(data, pos, where, None, budget)
    if not isinstance(sys_info, dict):
        raise RecordImportError(f"{where}: malformed system info")
    storages: dict[str, StorageRef] = {}
    obj, pos = safe_load_at(data, pos, where, storages, budget)
    keys, pos = safe_load_at(data, pos, where, None, budget)
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise RecordImportError(f"{where}: malformed storage key list")
    view = memoryview(data)
    buffers: dict[str, memoryview] = {}
    for key in keys:
        ref = storages.get(key)
        if ref is None or key in buffers:
            raise RecordImportError(f"{where}: storage key {key!r:.40} is unknown or repeated")
        if pos + 8 > len(data):
            raise RecordImportError(f"{where}: truncated before storage {key!r}")
        count = int.from_bytes(data[pos : pos + 8], "little", signed=True)
        nbytes = count * itemsize(ref.dtype)
        if count < 0 or pos + 8 + nbytes > len(data):
            raise RecordImportError(
                f"{where}: storage {key!r} claims {count} elements, past the end of the file"
            )
        buffers[key] = view[pos + 8 : pos + 8 + nbytes]
        _check_size(ref, nbytes, where)
        pos += 8 + nbytes
    if pos != len(data):
        raise RecordImportError(f"{where}: {len(data) - pos} unexpected bytes after the storages")

    def buffer(ref: StorageRef) -> memoryview:
        if ref.key not in buffers:
            raise RecordImportError(f"{where}: no data for storage {ref.key!r}")
        return buffers[ref.key]

    # The legacy writer always stores little-endian data, whatever the saving machine was.
    return _resolve(obj, buffer, False, where, len(data))


def _objects_budget(size: int) -> Budget:
    return Budget(size, "objects its pickle builds")


def _resolve(
    obj: Any, buffer: Any, big_endian: bool, name: str, size: int
) -> tuple[Any, dict[str, str]]:
    """Replace every `TensorRef` by its `TensorData`; containers become plain dict/list/tuple.

    The pickle may reach one container from many places (its memo makes shared references); the
    result is a tree, one copy per path, as the keys of a state dict are paths. Every node of
    that tree counts against `max_objects()` (so 30 levels of lists holding one shared list
    twice, 2^30 paths in a few hundred bytes, are refused after 2^19), and every tensor's
    bytes against a `Budget` of the file's size (so are zero-stride broadcasts and views that
    read one storage many times).
    """
    dtypes: dict[str, str] = {}
    limit = max_objects()
    nodes = [0]
    tensors = Budget(size, "materialized tensors")

    def walk(x: Any, path: str, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise RecordImportError(f"{name}: the saved object nests deeper than {MAX_DEPTH}")
        nodes[0] += 1
        if nodes[0] > limit:
            raise RecordImportError(
                f"{name}: the saved object expands to more than {limit} containers and values "
                f"(at {path or '<root>'}); shared references make a small file a huge tree "
                "(BURN_RECORD_MAX_OBJECTS raises the limit)"
            )
        if isinstance(x, TensorRef):
            key = path or "<root>"
            dtypes[key] = x.dtype
            array = materialize(x, buffer(x.storage), big_endian, f"{name}: {key}", tensors)
            return TensorData(array)
        if isinstance(x, StorageRef):
            raise RecordImportError(f"{name}: {path or '<root>'} is a bare storage, not a tensor")
        if isinstance(x, dict):  # OrderedDicts (OrderedState) come back as plain dicts
            return {k: walk(v, _join(path, k), depth + 1) for k, v in x.items()}
        if isinstance(x, list | tuple):
            items = [walk(v, _join(path, i), depth + 1) for i, v in enumerate(x)]
            return items if isinstance(x, list) else tuple(items)
        return x

    return walk(obj, "", 0), dtypes


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)
