"""What the restricted unpickler builds instead of torch objects, and how tensors are materialized.

A `.pt` pickle describes each tensor as `_rebuild_tensor_v2(storage, offset, size, stride, ...)`,
where `storage` is a persistent id naming raw bytes stored outside the pickle. The allowed rebuild
callables below only record those arguments (validated) in a `TensorRef`; the bytes are read after
unpickling (in the legacy format they even come after the pickle), by `materialize`, which slices
the storage with numpy's `as_strided` (offset, sizes, strides in elements) and copies the result.
Tensors that share a storage therefore come out as independent copies, as `torch.load` +
`.clone()` would give. Each copy is charged to the file's `Budget` first, so broadcasts and views
that read one storage many times cannot together ask for more than the file can honestly hold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ._dtypes import STORAGE_DTYPE, check_supported, itemsize, raw_dtype, to_burn
from ._errors import RecordImportError
from ._limits import Budget, empty

# A tensor may have more elements than its storage only through zero strides (an `expand`ed
# tensor). Such broadcasts are allowed up to this many elements; beyond it, a tiny file could ask
# for terabytes.
BROADCAST_LIMIT = 1 << 24
MAX_RANK = 64


@dataclass(frozen=True)
class Marker:
    """A stand-in for a torch global the pickle names (a storage class, a dtype, `torch.Tensor`)."""

    kind: str  # "storage", "dtype" or "type"
    name: str

    def __repr__(self) -> str:
        return f"torch.{self.name}"


@dataclass(frozen=True)
class StorageRef:
    """A storage named by a persistent id: `key` in the file, element type, element count.

    `view` is the legacy format's storage view: `(element offset, element count)` in the storage
    `key`; None for a whole storage.
    """

    key: str
    dtype: str
    numel: int
    view: tuple[int, int] | None = None


@dataclass(frozen=True)
class TensorRef:
    """A tensor to materialize: `as_strided(storage[offset:], size, stride)` of dtype `dtype`."""

    storage: StorageRef
    offset: int
    size: tuple[int, ...]
    stride: tuple[int, ...]
    dtype: str
    parameter: bool = False

    def __setstate__(self, state: Any) -> None:
        # BUILD on a tensor would set Python attributes on it in torch; nothing to keep here.
        raise RecordImportError("the pickle sets state on a tensor (BUILD), which is not allowed")


def _int(value: Any, what: str, low: int = 0) -> int:
    if type(value) is not int or value < low:
        raise RecordImportError(
            f"tensor rebuild: {what} must be an int >= {low}, got {value!r:.60}"
        )
    return value


def _ints(value: Any, what: str) -> tuple[int, ...]:
    if not isinstance(value, tuple | list) or len(value) > MAX_RANK:
        raise RecordImportError(
            f"tensor rebuild: {what} must be a tuple of ints, got {value!r:.60}"
        )
    return tuple(_int(v, f"each {what} entry") for v in value)


def make_storage(pid: Any) -> StorageRef:
    """Validate a persistent id `('storage', StorageClass, key, location, numel[, view])`."""
    if not isinstance(pid, tuple) or len(pid) not in (5, 6) or pid[0] != "storage":
        raise RecordImportError(f"unsupported persistent id {pid!r:.80}; expected a storage")
    storage_type, key, location, numel = pid[1:5]
    if not (isinstance(storage_type, Marker) and storage_type.kind == "storage"):
        raise RecordImportError(f"persistent id names {storage_type!r:.60}, not a storage class")
    if not isinstance(key, str) or not isinstance(location, str):
        raise RecordImportError(f"malformed storage persistent id {pid!r:.80}")
    numel = _int(numel, "storage size")
    view = pid[5] if len(pid) == 6 else None
    if view is not None:
        if not isinstance(view, tuple) or len(view) != 3 or not isinstance(view[0], str):
            raise RecordImportError(f"malformed storage view {view!r:.80}")
        view = (_int(view[1], "view offset"), _int(view[2], "view size"))  # in elements
    return StorageRef(key, STORAGE_DTYPE[storage_type.name], numel, view)


def rebuild_tensor(storage, storage_offset, size, stride, *_ignored) -> TensorRef:
    """`torch._utils._rebuild_tensor` / `_rebuild_tensor_v2`: hooks and metadata are ignored."""
    return _tensor(storage, storage_offset, size, stride, None)


def rebuild_tensor_v3(
    storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None
) -> TensorRef:
    """`torch._utils._rebuild_tensor_v3`: an untyped (byte) storage plus an explicit dtype."""
    if not (isinstance(dtype, Marker) and dtype.kind == "dtype"):
        raise RecordImportError(f"tensor rebuild: dtype must be a torch dtype, got {dtype!r:.60}")
    return _tensor(storage, storage_offset, size, stride, dtype.name)


def _tensor(storage, offset, size, stride, dtype: str | None) -> TensorRef:
    if not isinstance(storage, StorageRef):
        raise RecordImportError(f"tensor rebuild: expected a storage, got {storage!r:.60}")
    size, stride = _ints(size, "size"), _ints(stride, "stride")
    if len(size) != len(stride):
        raise RecordImportError(f"tensor rebuild: size {size} and stride {stride} differ in rank")
    return TensorRef(storage, _int(offset, "storage offset"), size, stride, dtype or storage.dtype)


def rebuild_parameter(data, requires_grad, backward_hooks, state=None) -> TensorRef:
    """`torch._utils._rebuild_parameter(_with_state)`: the parameter's tensor."""
    if not isinstance(data, TensorRef):
        raise RecordImportError(f"parameter rebuild: expected a tensor, got {data!r:.60}")
    return TensorRef(data.storage, data.offset, data.size, data.stride, data.dtype, True)


def rebuild_from_type_v2(func, new_type, args, state) -> TensorRef:
    """`torch._tensor._rebuild_from_type_v2`: only plain `Tensor` / `Parameter` types."""
    if func not in (rebuild_tensor, rebuild_tensor_v3, rebuild_parameter):
        raise RecordImportError(f"_rebuild_from_type_v2 of {func!r:.60} is not allowed")
    if not (isinstance(new_type, Marker) and new_type.kind == "type"):
        raise RecordImportError(f"_rebuild_from_type_v2 to type {new_type!r:.60} is not allowed")
    if not isinstance(args, tuple):
        raise RecordImportError("_rebuild_from_type_v2: malformed arguments")
    return func(*args)


def _copy_itemsize(name: str) -> int:
    """Bytes per element of the array `to_burn` makes from torch dtype `name` (bf16 widens to
    f32, unsigned 16/32/64-bit ints to i64)."""
    return {"bfloat16": 4, "uint16": 8, "uint32": 8, "uint64": 8}.get(name, itemsize(name))


def materialize(
    ref: TensorRef, buffer: Any, big_endian: bool, key: str, budget: Budget | None = None
) -> np.ndarray:
    """The tensor `ref` as a new C-contiguous numpy array of a Burn dtype.

    Args:
        ref: what the pickle described.
        buffer: the bytes of the whole storage `ref.storage.key`.
        big_endian: whether the file says its storages are big-endian.
        key: the tensor's name, for error messages.
        budget: charged with the bytes of the copy (elements x the Burn dtype's size) before it
            is made; None charges nothing.

    Example:
        >>> s = StorageRef("0", "float32", 6)
        >>> buf = np.arange(6, dtype="<f4").tobytes()
        >>> materialize(TensorRef(s, 0, (3, 2), (1, 3), "float32"), buf, False, "w").tolist()
        [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    """
    check_supported(ref.dtype, key)
    dt = raw_dtype(ref.dtype, big_endian)
    nbytes = len(buffer)
    view = ref.storage.view
    if view is not None:  # legacy storage view: a window of the root storage
        start = view[0] * dt.itemsize
        stop = start + view[1] * dt.itemsize
        if stop > nbytes:
            raise RecordImportError(
                f"{key}: storage view ends at byte {stop}, storage has {nbytes}"
            )
        buffer, nbytes = memoryview(buffer)[start:stop], stop - start
    available = nbytes // dt.itemsize
    flat = np.frombuffer(buffer, dtype=dt, count=available)
    size, stride, offset = ref.size, ref.stride, ref.offset
    count = math.prod(size)
    if count == 0:
        return to_burn(empty(size, dt, key), ref.dtype, key)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if last >= available:
        raise RecordImportError(
            f"{key}: tensor of size {list(size)}, stride {list(stride)} and offset {offset} "
            f"reads element {last}, but its storage {ref.storage.key!r} holds {available}"
        )
    if count > max(available, BROADCAST_LIMIT):
        raise RecordImportError(
            f"{key}: tensor of size {list(size)} has {count} elements from a storage of "
            f"{available}; broadcast views above {BROADCAST_LIMIT} elements are refused"
        )
    if budget is not None:  # charged as copied: bf16 and unsigned ints widen (`to_burn`)
        budget.charge(count * _copy_itemsize(ref.dtype), f"{key} (size {list(size)})")
    strided = as_strided(
        flat[offset:], shape=size, strides=[s * dt.itemsize for s in stride], writeable=False
    )
    return to_burn(strided, ref.dtype, key)
