"""Comparing a loaded record with the one a module expects, and adopting the module's dtypes."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._dtypes import DType, TensorData
from ._errors import RecordDTypeError, RecordMismatchError
from ._param import ParamRecord
from ._record import Record

Shape = tuple[int, ...]


class RecordDiff(NamedTuple):
    """What `record_diff` found; unpacks as `(missing, unexpected, mis_shaped)`; falsy if clean."""

    missing: list[str]
    unexpected: list[str]
    mis_shaped: list[tuple[str, Shape | None, Shape | None]]

    def __bool__(self) -> bool:
        return bool(self.missing or self.unexpected or self.mis_shaped)


def _is_container(x: Any) -> bool:
    return isinstance(x, dict | list | tuple)


def _is_tensor(x: Any) -> bool:
    if isinstance(x, TensorData | ParamRecord):
        return True
    # Accept the module's own tensors too (anything array-like with a shape and a dtype).
    return not _is_container(x) and hasattr(x, "shape") and hasattr(x, "dtype")


def _shape(x: Any) -> Shape:
    s = x.shape
    if callable(s) and not isinstance(s, tuple):
        s = s()
    return tuple(int(d) for d in s)


def flatten(item: Any, path: str = "") -> dict[str, Any]:
    """Every leaf of a nested record by key path (`"layers.0.weight"`); the root leaf is `"<root>"`.

    Example:
        >>> list(flatten({"layers": [{"w": 1}, {"w": 2}], "b": None}))
        ['layers.0.w', 'layers.1.w', 'b']
    """
    out: dict[str, Any] = {}
    if isinstance(item, dict):
        for key, value in item.items():
            out.update(flatten(value, f"{path}.{key}" if path else str(key)))
    elif isinstance(item, list | tuple):
        for i, value in enumerate(item):
            out.update(flatten(value, f"{path}.{i}" if path else str(i)))
    else:
        out[path or "<root>"] = item
    return out


def record_diff(expected: Any, loaded: Any) -> RecordDiff:
    """Every key path missing from `loaded`, unexpected in it, or holding a tensor of another shape.

    `expected` is usually the module's own record (`module.into_record()`); leaves are compared by
    key path. A tensor facing a non-tensor counts as mis-shaped, with `None` for the non-tensor
    side.

    Args:
        expected: the record the module would produce.
        loaded: the record read from a file.

    Returns:
        `RecordDiff(missing, unexpected, mis_shaped)`; `mis_shaped` holds
        `(path, expected_shape, loaded_shape)`.

    Example:
        >>> from burn_record import TensorData
        >>> exp = {"fc": {"weight": TensorData.zeros([2, 3]), "bias": TensorData.zeros([3])}}
        >>> got = {"fc": {"weight": TensorData.zeros([3, 2])}, "head": 1}
        >>> missing, unexpected, mis_shaped = record_diff(exp, got)
        >>> missing, unexpected, mis_shaped
        (['fc.bias'], ['head'], [('fc.weight', (2, 3), (3, 2))])
    """
    exp, got = flatten(expected), flatten(loaded)
    missing = [p for p in exp if p not in got]
    unexpected = [p for p in got if p not in exp]
    mis_shaped = []
    for path, e in exp.items():
        if path not in got:
            continue
        g = got[path]
        e_t, g_t = _is_tensor(e), _is_tensor(g)
        if e_t or g_t:
            es, gs = (_shape(e) if e_t else None), (_shape(g) if g_t else None)
            if es != gs:
                mis_shaped.append((path, es, gs))
    return RecordDiff(missing, unexpected, mis_shaped)


def check_record(
    expected: Any, loaded: Any, *, allow_missing: bool = False, allow_unexpected: bool = False
) -> RecordDiff:
    """`record_diff`, raising `RecordMismatchError` naming every problem not explicitly allowed.

    Example:
        >>> check_record({"w": 1}, {"w": 2, "extra": 3}, allow_unexpected=True).unexpected
        ['extra']
    """
    diff = record_diff(expected, loaded)
    missing = [] if allow_missing else diff.missing
    unexpected = [] if allow_unexpected else diff.unexpected
    if missing or unexpected or diff.mis_shaped:
        raise RecordMismatchError(missing, unexpected, diff.mis_shaped)
    return diff


def _dtype_of(ref: Any) -> DType | None:
    if isinstance(ref, ParamRecord):
        return ref.value.dtype
    if isinstance(ref, TensorData):
        return ref.dtype
    if _is_container(ref) or not hasattr(ref, "dtype"):
        return None
    try:
        return DType.from_any(ref.dtype)
    except TypeError:
        return None


def _convert(data: TensorData, dtype: DType | None, path: str) -> TensorData:
    if dtype is None or data.dtype is dtype or getattr(data.dtype, "is_quantized", False):
        return data  # a quantized tensor keeps its scheme: loading restores it
    if data.dtype.kind is not dtype.kind:
        raise RecordDTypeError(
            f"{path or '<root>'}: the record holds a {data.dtype.value} tensor where the reference "
            f"has {dtype.value}; a {data.dtype.kind} tensor cannot become {dtype.kind}"
        )
    with np.errstate(over="ignore"):  # f64 -> f16 overflow gives inf, as a cast in Burn does
        return data.convert(dtype)


def apply_dtypes(item: Any, reference: Any, path: str = "") -> Any:
    """Convert each tensor of `item` to the dtype of the tensor at the same key path in `reference`.

    This is "loading converts to the module's dtypes": a record saved with `HalfPrecisionSettings`
    comes back as f16, and `apply_dtypes(loaded, module.into_record())` makes it f32 again where the
    module is f32. Tensors without a counterpart keep their stored dtype; structure and ParamRecord
    ids are kept. Float and int convert within their kind; crossing kinds raises `RecordDTypeError`.

    Example:
        >>> from burn_record import TensorData, ParamRecord
        >>> loaded = {"w": ParamRecord("p0", TensorData([1.5], dtype="float16"))}
        >>> apply_dtypes(loaded, {"w": TensorData([0.0], dtype="float32")})["w"].dtype
        DType.F32
    """
    if isinstance(item, ParamRecord):
        return ParamRecord(item.id, _convert(item.value, _dtype_of(reference), path))
    if isinstance(item, TensorData):
        return _convert(item, _dtype_of(reference), path)
    if isinstance(item, dict):
        ref = reference if isinstance(reference, dict) else {}
        return Record._of(
            {k: apply_dtypes(v, ref.get(k), f"{path}.{k}" if path else k) for k, v in item.items()}
        )
    if isinstance(item, list | tuple):
        ref = reference if isinstance(reference, list | tuple) else ()
        out = [
            apply_dtypes(v, ref[i] if i < len(ref) else None, f"{path}.{i}" if path else str(i))
            for i, v in enumerate(item)
        ]
        return tuple(out) if isinstance(item, tuple) else out
    return item
