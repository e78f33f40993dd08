"""The named tree: an item as plain maps/lists, shared by the msgpack and JSON formats.

Layout (DESIGN §7): a param is `{"id": str, "param": T}` and a tensor `T` is
`{"bytes": raw little-endian bytes, "shape": [int], "dtype": "F32"}`. Python distinctions the wire
formats lack are tagged: a tuple is `{"__tuple__": [...]}`; a user dict whose key set happens to
equal
one of these reserved key sets is escaped as `{"__dict__": {...}}`. Every other dict is stored as
is, so
a module record reads like Burn's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from burn_tensor.quantization import QuantizedData, QuantScheme

from ._dtypes import DTYPE_BY_NAME, TensorData
from ._errors import RecordCorruptedError, RecordDTypeError, UnsupportedItemError
from ._param import ParamRecord
from ._record import Record
from ._settings import PrecisionSettings
from ._tensors import check_shape, convert_for_save, tensor_buffer, tensor_from_buffer

# Deep enough for any module tree, shallow enough that hostile input cannot exhaust the stack.
MAX_DEPTH = 200
INT_MIN, INT_MAX = -(2**63), 2**64 - 1

PARAM_KEYS = frozenset({"id", "param"})
TENSOR_KEYS = frozenset({"bytes", "shape", "dtype"})
TUPLE_KEY = "__tuple__"
DICT_KEY = "__dict__"
#: a quantized tensor: stored integers and scales as they are, its scheme, its logical shape
QTENSOR_KEYS = frozenset({"qvalues", "qscales", "qscheme", "shape"})
_RESERVED = (
    PARAM_KEYS,
    TENSOR_KEYS,
    frozenset({TUPLE_KEY}),
    frozenset({DICT_KEY}),
    QTENSOR_KEYS,
)


def join(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


def check_key(key: object, path: str) -> None:
    if not isinstance(key, str):
        kind = type(key).__name__
        raise UnsupportedItemError(
            f"{path or '<root>'}: dict keys must be str, got {kind} {key!r:.40}"
        )


def scalar(value: Any, path: str) -> Any:
    """Normalize a scalar leaf (numpy scalars become Python ones); raise for unsupported values."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            raise UnsupportedItemError(
                f"{path or '<root>'}: int {value} is outside the storable range [-2**63, 2**64)"
            )
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return scalar(value.item(), path)
    raise UnsupportedItemError(
        f"{path or '<root>'}: cannot record a value of type {type(value).__name__}; records hold "
        "dicts with str keys, lists, tuples, int, float, str, bool, None, TensorData, ParamRecord"
    )


def to_plain(
    item: Any,
    settings: PrecisionSettings,
    encode_bytes: Callable[[memoryview], Any],
    path: str = "",
    depth: int = 0,
) -> Any:
    """Turn an item into the named tree, converting tensors to the precision settings."""
    if depth > MAX_DEPTH:
        raise UnsupportedItemError(f"{path}: item nested deeper than {MAX_DEPTH} levels")
    if isinstance(item, ParamRecord):
        return {"id": item.id, "param": _any_tensor(item.value, settings, encode_bytes, path)}
    if isinstance(item, QuantizedData):
        return _qtensor(item, encode_bytes)
    if isinstance(item, TensorData):
        return _tensor(item, settings, encode_bytes, path)
    if isinstance(item, dict):
        out = {}
        for key, value in item.items():
            check_key(key, path)
            out[key] = to_plain(value, settings, encode_bytes, join(path, key), depth + 1)
        return {DICT_KEY: out} if frozenset(out) in _RESERVED else out
    if isinstance(item, list | tuple):
        values = [
            to_plain(v, settings, encode_bytes, join(path, i), depth + 1)
            for i, v in enumerate(item)
        ]
        return {TUPLE_KEY: values} if isinstance(item, tuple) else values
    return scalar(item, path)


def _tensor(data: TensorData, settings, encode_bytes, path: str) -> dict:
    data = convert_for_save(data, settings, path)
    return {
        "bytes": encode_bytes(tensor_buffer(data)),
        "shape": list(data.shape),
        "dtype": data.dtype.name,
    }


def _any_tensor(data, settings, encode_bytes, path: str) -> dict:
    if isinstance(data, QuantizedData):
        return _qtensor(data, encode_bytes)
    return _tensor(data, settings, encode_bytes, path)


def _qtensor(data: QuantizedData, encode_bytes) -> dict:
    """Quantized: the integers and scales exactly as stored (precision settings do not apply:
    converting packed words would corrupt them)."""
    values, scales = TensorData(data.values), TensorData(data.scales)
    return {
        "qvalues": {
            "bytes": encode_bytes(tensor_buffer(values)),
            "shape": list(values.shape),
            "dtype": values.dtype.name,
        },
        "qscales": {
            "bytes": encode_bytes(tensor_buffer(scales)),
            "shape": list(scales.shape),
            "dtype": scales.dtype.name,
        },
        "qscheme": _scheme_fields(data.scheme),
        "shape": list(data.shape),
    }


def _scheme_fields(scheme: QuantScheme) -> dict:
    """The scheme's value type and the fields that differ from the defaults `from_dict` fills in
    (a per-tensor scheme's `block_size: None` is one): ~80 bytes less per quantized tensor, which
    a small model with dozens of tensors feels (an int4 record ~4 % smaller). Files that store
    every field load the same."""
    full = scheme.to_dict()
    return {k: v for k, v in full.items() if k == "value" or v != _DEFAULT_SCHEME[k]}


_DEFAULT_SCHEME = QuantScheme().to_dict()


def _qtensor_from(obj: dict, decode_bytes, path: str) -> QuantizedData:
    scheme = obj["qscheme"]
    if not isinstance(scheme, dict):
        raise RecordCorruptedError(f"{path or '<root>'}: malformed quantized tensor scheme")
    try:
        return QuantizedData(
            _tensor_from(obj["qvalues"], decode_bytes, path).array,
            _tensor_from(obj["qscales"], decode_bytes, path).array,
            QuantScheme.from_dict(scheme),
            check_shape(obj["shape"], path),
        )
    except (ValueError, TypeError) as e:
        raise RecordCorruptedError(f"{path or '<root>'}: malformed quantized tensor: {e}") from None


def from_plain(
    obj: Any, decode_bytes: Callable[[Any, str], Any], path: str = "", depth: int = 0
) -> Any:
    """Rebuild an item from the named tree; tensors keep the dtype they were stored with."""
    if depth > MAX_DEPTH:
        raise RecordCorruptedError(f"{path}: record nested deeper than {MAX_DEPTH} levels")
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    if isinstance(obj, list):
        return [from_plain(v, decode_bytes, join(path, i), depth + 1) for i, v in enumerate(obj)]
    if not isinstance(obj, dict):
        raise RecordCorruptedError(f"{path or '<root>'}: unexpected {type(obj).__name__} in record")
    for key in obj:
        if not isinstance(key, str):
            raise RecordCorruptedError(f"{path or '<root>'}: non-str key {key!r:.40} in record")
    keys = frozenset(obj)
    if keys == PARAM_KEYS:
        if not isinstance(obj["id"], str) or not isinstance(obj["param"], dict):
            raise RecordCorruptedError(f"{path or '<root>'}: malformed param")
        if frozenset(obj["param"]) == QTENSOR_KEYS:
            return ParamRecord(obj["id"], _qtensor_from(obj["param"], decode_bytes, path))
        return ParamRecord(obj["id"], _tensor_from(obj["param"], decode_bytes, path))
    if keys == QTENSOR_KEYS:
        return _qtensor_from(obj, decode_bytes, path)
    if keys == TENSOR_KEYS:
        return _tensor_from(obj, decode_bytes, path)
    if keys == {TUPLE_KEY}:
        values = obj[TUPLE_KEY]
        if not isinstance(values, list):
            raise RecordCorruptedError(f"{path or '<root>'}: malformed tuple")
        return tuple(
            from_plain(v, decode_bytes, join(path, i), depth + 1) for i, v in enumerate(values)
        )
    if keys == {DICT_KEY}:
        inner = obj[DICT_KEY]
        if not isinstance(inner, dict) or frozenset(inner) not in _RESERVED:
            # Only dicts colliding with a reserved key set are ever escaped.
            raise RecordCorruptedError(f"{path or '<root>'}: malformed escaped dict")
        obj = inner
    out = {}
    for key, value in obj.items():
        if not isinstance(key, str):
            raise RecordCorruptedError(f"{path or '<root>'}: non-str key {key!r:.40} in record")
        out[key] = from_plain(value, decode_bytes, join(path, key), depth + 1)
    return Record._of(out)


def _tensor_from(obj: dict, decode_bytes, path: str) -> TensorData:
    if frozenset(obj) != TENSOR_KEYS:
        raise RecordCorruptedError(f"{path or '<root>'}: malformed tensor")
    name = obj["dtype"]
    if not isinstance(name, str):
        raise RecordCorruptedError(f"{path or '<root>'}: malformed tensor dtype {name!r:.40}")
    dtype = DTYPE_BY_NAME.get(name)
    if dtype is None:
        raise RecordDTypeError(
            f"{path or '<root>'}: unknown dtype {name!r:.40}; known: {sorted(DTYPE_BY_NAME)}"
        )
    shape = check_shape(obj["shape"], path)
    return tensor_from_buffer(decode_bytes(obj["bytes"], path), shape, dtype, path)
