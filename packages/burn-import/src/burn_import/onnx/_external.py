"""External tensor data: weights saved in files beside the model.

torch's dynamo exporter (`torch.onnx.export(..., dynamo=True)`, torch's default) and
`onnx.save(..., save_as_external_data=True)` write each large initializer's bytes to a file next
to the `.onnx` (`model.onnx.data`); the tensor keeps its shape and type plus a `location`, an
`offset` and a `length` into that file. The importer reads those bytes into the tensor before it
checks the graph, so everything after it sees ordinary tensors.

A model file is untrusted input, and `location` is a path it chooses. The data is read only
from regular files inside the model's own folder: an absolute path, a `..` component, or a
symbolic link that resolves outside the folder is refused before anything is opened, and each
tensor's `offset` / `length` must lie inside its file and match the bytes its declared shape and
type need. The total is capped at `MAX_TOTAL_BYTES` (protobuf's limit for the one message the
importer then holds), so a file cannot make the importer read more than that.

Example (a model saved with its weights beside it, then imported from its path):

    onnx.save(model, "net.onnx", save_as_external_data=True, location="net.onnx.data")
    ModelGen().input("net.onnx").out_dir("gen").run()  # the weights come from net.onnx.data
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path, PurePosixPath, PureWindowsPath

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto

from ._errors import OnnxImportError

#: bytes of external data one model may bring in (protobuf's limit for one message: 2 GiB)
MAX_TOTAL_BYTES = 2 * 1024**3
#: elements one tensor may declare (the importer's limit for any tensor)
MAX_ELEMENTS = 2**31


def external_tensors(graph: onnx.GraphProto, where: str = "") -> Iterator[tuple[str, TensorProto]]:
    """Every tensor of `graph` (subgraphs included) whose data lives in an external file, with
    a name for error messages: initializers, sparse initializers, Constant-style attributes."""

    def tensors_of(t: TensorProto, what: str):
        if t.data_location == TensorProto.EXTERNAL:
            yield what, t

    for init in graph.initializer:
        yield from tensors_of(init, f"{where}initializer {init.name!r}")
    for sp in graph.sparse_initializer:
        yield from tensors_of(sp.values, f"{where}sparse initializer {sp.values.name!r}")
        yield from tensors_of(sp.indices, f"{where}sparse initializer {sp.values.name!r} indices")
    for node in graph.node:
        label = node.name or (node.output[0] if node.output else node.op_type)
        at = f"{where}node {label!r}"
        for a in node.attribute:
            what = f"{at} attribute {a.name!r}"
            if a.type == AttributeProto.TENSOR:
                yield from tensors_of(a.t, what)
            elif a.type == AttributeProto.TENSORS:
                for t in a.tensors:
                    yield from tensors_of(t, what)
            elif a.type == AttributeProto.SPARSE_TENSOR:
                yield from tensors_of(a.sparse_tensor.values, what)
                yield from tensors_of(a.sparse_tensor.indices, what)
            elif a.type == AttributeProto.GRAPH:
                yield from external_tensors(a.g, f"{what} > ")
            elif a.type == AttributeProto.GRAPHS:
                for g in a.graphs:
                    yield from external_tensors(g, f"{what} > ")


def inline_external_data(model: onnx.ModelProto, folder: Path | None) -> None:
    """Read every external tensor of `model` from its file under `folder` into the tensor itself
    (in place). `folder` is None when the model came as bytes or a ModelProto: external data is
    then refused, since there is no folder it could be read from."""
    found = list(external_tensors(model.graph))
    if not found:
        return
    what, first = found[0]
    if folder is None:
        loc = _entries(first, what).get("location", "?")
        raise OnnxImportError(
            f"{what}: its external data ({loc!r}) can only be read from beside the .onnx "
            "file, and the model was given as bytes or a ModelProto: pass the file's path, or "
            "load it with onnx.load(path) first"
        )
    root = folder.resolve()
    total = 0
    for what, t in found:
        data = _read(t, what, root, MAX_TOTAL_BYTES - total)
        total += len(data)
        t.raw_data = data
        del t.external_data[:]
        t.data_location = TensorProto.DEFAULT


def _entries(t: TensorProto, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for e in t.external_data:
        if e.key in out:
            raise OnnxImportError(f"{what}: external data key {e.key!r} given twice")
        out[e.key] = e.value
    return out


def _int_entry(info: dict[str, str], key: str, what: str) -> int | None:
    if key not in info:
        return None
    try:
        v = int(info[key])
    except ValueError:
        raise OnnxImportError(f"{what}: external data {key} {info[key]!r} is not an integer") from None
    if v < 0:
        raise OnnxImportError(f"{what}: external data {key} {v} is negative")
    return v


def _file_of(loc: str, what: str, root: Path) -> Path:
    """The regular file `loc` names inside `root`, or a clear refusal."""
    if not loc:
        raise OnnxImportError(f"{what}: external data without a 'location'")
    # Judge the text as written on any OS: '/x', 'C:\\x', '\\\\host\\x' are absolute somewhere.
    posix, windows = PurePosixPath(loc), PureWindowsPath(loc)
    if posix.is_absolute() or windows.is_absolute() or windows.drive or ".." in windows.parts:
        raise OnnxImportError(
            f"{what}: external data location {loc!r} must be a relative path inside the "
            f"model's folder ({root}) without '..'"
        )
    path = (root / loc).resolve()
    if root not in path.parents:
        raise OnnxImportError(
            f"{what}: external data location {loc!r} resolves to {path}, outside the model's "
            f"folder ({root}); a symbolic link out of the folder is refused"
        )
    if not path.is_file():
        state = "is not a regular file" if path.exists() else "does not exist"
        raise OnnxImportError(f"{what}: external data file {loc!r} {state} (in {root})")
    return path


def _read(t: TensorProto, what: str, root: Path, budget: int) -> bytes:
    info = _entries(t, what)
    path = _file_of(info.get("location", ""), what, root)
    dims = list(t.dims)
    if any(d < 0 for d in dims):
        raise OnnxImportError(f"{what}: negative dimension in shape {dims}")
    n = int(np.prod(dims, dtype=object)) if dims else 1
    if n > MAX_ELEMENTS:
        raise OnnxImportError(f"{what}: declared shape {dims} has more than 2^31 elements")
    if t.data_type in (TensorProto.STRING, TensorProto.UNDEFINED):
        raise OnnxImportError(f"{what}: external data of type {t.data_type} is not supported")
    try:
        item = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.data_type)).itemsize
    except Exception:  # noqa: BLE001 - onnx raises several types for unknown codes
        raise OnnxImportError(f"{what}: unknown data type {t.data_type}") from None
    # 4-bit types pack two values a byte (onnx's rule for raw data)
    packed = t.data_type in {getattr(TensorProto, k, -1) for k in ("INT4", "UINT4", "FLOAT4E2M1")}
    need = (n + 1) // 2 if packed else n * item
    size = path.stat().st_size
    offset = _int_entry(info, "offset", what) or 0
    length = _int_entry(info, "length", what)
    if length is None:
        length = max(size - offset, 0)
    if length != need:
        raise OnnxImportError(
            f"{what}: external data length {length} bytes does not match its shape {dims} "
            f"({need} bytes expected)"
        )
    if offset + length > size:
        raise OnnxImportError(
            f"{what}: external data [{offset}, {offset + length}) lies past the end of "
            f"{path.name!r} ({size} bytes; truncated?)"
        )
    if length > budget:
        raise OnnxImportError(
            f"{what}: the model's external data exceeds {MAX_TOTAL_BYTES} bytes (2 GiB), the "
            "most the importer holds in one model"
        )
    with path.open("rb") as f:
        f.seek(offset)
        data = f.read(length)
    if len(data) != length:  # the file shrank while we read it
        raise OnnxImportError(f"{what}: read {len(data)} of {length} bytes from {path.name!r}")
    return data
