"""Tensor leaves: precision conversion on save, raw little-endian bytes out, validated bytes in."""

from __future__ import annotations

import math

import numpy as np

from ._dtypes import DType, TensorData
from ._errors import RecordCorruptedError, RecordPrecisionError
from ._settings import PrecisionSettings

# Shapes are checked against the bytes actually present, but a bogus rank is refused before that.
MAX_RANK = 64


def convert_for_save(data: TensorData, settings: PrecisionSettings, path: str) -> TensorData:
    """Cast float tensors to the settings' float type and int tensors to its int type.

    Bool tensors are kept. An int tensor whose values do not fit the narrower type is refused
    (Burn panics there too) instead of being silently wrapped around; floats follow IEEE rounding,
    so f32 -> f16 overflows to +-inf exactly like numpy and Burn's `f16::from_f32`.
    """
    dtype = data.dtype
    if dtype.is_float():
        target = settings.float_dtype
    elif dtype.is_int():
        target = settings.int_dtype
    else:
        return data
    if dtype is target:
        return data
    arr = data.array
    if dtype.is_int() and arr.size:
        info = np.iinfo(target.np)
        lo, hi = int(arr.min()), int(arr.max())
        if lo < info.min or hi > info.max:
            raise RecordPrecisionError(
                f"{path or '<root>'}: int tensor values in [{lo}, {hi}] do not fit {target.value} "
                f"of {settings!r}; use a wider precision setting"
            )
    with np.errstate(over="ignore"):
        return TensorData(arr.astype(target.np))


def tensor_buffer(data: TensorData) -> memoryview:
    """The tensor's elements as little-endian bytes, without copying on little-endian hosts."""
    arr = data.array
    if arr.dtype.byteorder == ">" or (arr.dtype.byteorder == "=" and not np.little_endian):
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return memoryview(np.ascontiguousarray(arr).reshape(-1).view(np.uint8))


# numpy's dimensions and sizes are signed 64-bit: a declared shape past this is corrupt.
_MAX_DIM = (1 << 62) - 1


def tensor_from_buffer(buf, shape: tuple[int, ...], dtype: DType, path: str) -> TensorData:
    """Rebuild a tensor from its raw bytes; the byte count must match shape x dtype exactly.

    The elements are copied so the returned array is writable and does not pin the whole file.
    """
    count = math.prod(shape)
    if any(d > _MAX_DIM for d in shape) or count > _MAX_DIM:
        raise RecordCorruptedError(
            f"{path or '<root>'}: tensor shape {list(shape)} has a dimension or element count "
            f"past {_MAX_DIM}, more than any array can hold"
        )
    if len(buf) != count * dtype.size:
        raise RecordCorruptedError(
            f"{path or '<root>'}: tensor of shape {list(shape)} and dtype {dtype.value} needs "
            f"{count * dtype.size} bytes, found {len(buf)}"
        )
    arr = np.frombuffer(buf, dtype=dtype.np.newbyteorder("<"), count=count)
    return TensorData(arr.astype(dtype.np, copy=True).reshape(shape))


def check_shape(shape: object, path: str) -> tuple[int, ...]:
    """Validate a decoded shape: a short list of non-negative ints."""
    if not isinstance(shape, list | tuple) or len(shape) > MAX_RANK:
        raise RecordCorruptedError(f"{path or '<root>'}: malformed tensor shape {shape!r:.80}")
    for d in shape:
        if type(d) is not int or d < 0:
            raise RecordCorruptedError(f"{path or '<root>'}: malformed tensor shape {shape!r:.80}")
    return tuple(shape)
