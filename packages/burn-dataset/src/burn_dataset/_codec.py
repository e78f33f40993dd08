"""msgpack encoding of items, with numpy arrays kept as raw bytes (no float -> text round trip)."""

from __future__ import annotations

import dataclasses
from typing import Any

import msgpack
import numpy as np

# msgpack extension type code for numpy arrays: payload is [dtype.str, shape, raw bytes].
_NDARRAY_EXT = 1


def _default(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            raise TypeError("cannot store a numpy array of Python objects; use a numeric dtype")
        array = np.ascontiguousarray(obj)
        payload = msgpack.packb([array.dtype.str, list(array.shape), array.tobytes()])
        return msgpack.ExtType(_NDARRAY_EXT, payload)
    if isinstance(obj, np.generic):
        return obj.item()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(
        f"cannot serialize {type(obj).__name__} with msgpack; items may contain None, bool, int, "
        "float, str, bytes, list, tuple, dict, dataclasses and numpy arrays"
    )


def _ext_hook(code: int, data: bytes) -> Any:
    if code == _NDARRAY_EXT:
        dtype, shape, raw = msgpack.unpackb(data, raw=False)
        # copy: frombuffer views are read-only, and users expect to be able to mutate items.
        return np.frombuffer(raw, dtype=np.dtype(dtype)).reshape(shape).copy()
    return msgpack.ExtType(code, data)


def pack(item: Any) -> bytes:
    """Serialize an item to msgpack bytes.

    Example:
        >>> import numpy as np
        >>> unpack(pack({"x": np.arange(3, dtype=np.int16)}))["x"].tolist()
        [0, 1, 2]
    """
    return msgpack.packb(item, default=_default, use_bin_type=True)


def unpack(data: bytes) -> Any:
    """Inverse of `pack` (tuples come back as lists, dataclasses as dicts)."""
    return msgpack.unpackb(data, raw=False, ext_hook=_ext_hook, strict_map_key=False)
