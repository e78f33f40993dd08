"""`TensorData`: a tensor's elements on the host, with shape and dtype."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._dtype import Bool, DType, Float, Int
from ._print import format_element
from ._shape import Shape
from ._tolerance import Tolerance


class TensorData:
    """Host-side tensor contents: a contiguous numpy array plus its `Shape` and `DType`.

    Build from nested lists, numpy arrays or raw bytes. Lists of Python floats become float32, ints
    int64 (cast later by the backend), bools bool.

    Args:
        value: nested sequence, numpy array or scalar.
        shape: optional target shape (the element count must match).
        dtype: optional target dtype (`DType`, `"float32"`, numpy dtype).

    Example:
        >>> d = TensorData([[1.0, 2.0], [3.0, 4.0]])
        >>> d.shape, d.dtype
        (Shape([2, 2]), DType.F32)
    """

    __slots__ = ("_array",)

    def __init__(self, value: Any, shape: Sequence[int] | None = None, dtype: Any = None):
        if isinstance(value, TensorData):
            arr = value._array
        elif isinstance(value, np.ndarray):
            arr = value
        else:
            arr = _from_python(value, None if dtype is None else DType.from_any(dtype).np)
        if dtype is not None:
            target = DType.from_any(dtype).np
            if arr.dtype != target:
                arr = cast(arr, target)
        elif arr.dtype not in _SUPPORTED:
            arr = _coerce_unsupported(arr)
        if shape is not None:
            shape = Shape(shape)
            if arr.size != shape.num_elements():
                raise ValueError(
                    f"TensorData: {arr.size} elements cannot take shape {list(shape)} "
                    f"({shape.num_elements()} elements)"
                )
            arr = arr.reshape(shape)
        self._array = np.ascontiguousarray(arr)

    # -- construction -------------------------------------------------------------------------
    @staticmethod
    def from_bytes(
        data: bytes | bytearray | memoryview, shape: Sequence[int], dtype: Any
    ) -> TensorData:
        """Rebuild from little-endian raw bytes; the byte count must match shape x dtype size."""
        dt = DType.from_any(dtype)
        shape = Shape(shape)
        expected = shape.num_elements() * dt.size
        if len(data) != expected:
            raise ValueError(
                f"TensorData.from_bytes: {len(data)} bytes given, shape {list(shape)} of {dt.value} "
                f"needs {expected}"
            )
        arr = np.frombuffer(bytes(data), dtype=dt.np.newbyteorder("<")).astype(dt.np)
        return TensorData(arr.reshape(shape))

    @staticmethod
    def zeros(shape: Sequence[int], dtype: Any = DType.F32) -> TensorData:
        """TensorData of `shape` filled with 0 in `dtype` (Burn's `TensorData::zeros`)."""
        return TensorData(np.zeros(tuple(Shape(shape)), DType.from_any(dtype).np))

    @staticmethod
    def ones(shape: Sequence[int], dtype: Any = DType.F32) -> TensorData:
        """TensorData of `shape` filled with 1 in `dtype` (Burn's `TensorData::ones`)."""
        return TensorData(np.ones(tuple(Shape(shape)), DType.from_any(dtype).np))

    @staticmethod
    def full(shape: Sequence[int], value: Any, dtype: Any = DType.F32) -> TensorData:
        """TensorData of `shape` filled with `value` in `dtype` (Burn's `TensorData::full`)."""
        return TensorData(np.full(tuple(Shape(shape)), value, DType.from_any(dtype).np))

    # -- properties ----------------------------------------------------------------------------
    @property
    def shape(self) -> Shape:
        """The shape, a `Shape` (Burn's `TensorData::shape`)."""
        return Shape(self._array.shape)

    @property
    def dtype(self) -> DType:
        """The element type, a `DType` (Burn's `TensorData::dtype`)."""
        return DType.from_np(self._array.dtype)

    @property
    def bytes(self) -> bytes:
        """Little-endian raw bytes (the serialized form used by records)."""
        arr = self._array
        if arr.dtype.byteorder == ">":
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        return arr.tobytes()

    def as_bytes(self) -> bytes:
        """The elements as little-endian bytes, row-major (Burn's `as_bytes`); the same as `bytes`.
        """
        return self.bytes

    def rank(self) -> int:
        """The number of dims (Burn's `rank`)."""
        return self._array.ndim

    def num_elements(self) -> int:
        """The number of elements, the product of the shape (Burn's `num_elements`)."""
        return int(self._array.size)

    @property
    def array(self) -> np.ndarray:
        """The underlying numpy array (read it, do not write it)."""
        return self._array

    def numpy(self) -> np.ndarray:
        """A copy of the elements as a numpy array of `shape` and `dtype`."""
        return self._array.copy()

    @property
    def value(self) -> list:
        """The elements as a flat Python list, row-major (Burn's old `Data.value: Vec<E>`).

        The first book reads a loss as `loss.into_data().value[0]`.

        Example:
            >>> TensorData([[1.5, 2.0], [3.0, 4.0]]).value
            [1.5, 2.0, 3.0, 4.0]
        """
        return self.to_vec()

    def to_vec(self) -> list:
        """The elements as a flat Python list, row-major (Burn's `to_vec`; `into_vec`, `as_slice`).
        """
        return self._array.reshape(-1).tolist()

    into_vec = to_vec
    as_slice = to_vec

    def tolist(self) -> Any:
        """The elements as nested Python lists of `shape` (numpy's `tolist`)."""
        return self._array.tolist()

    def iter(self):
        """An iterator over the elements as Python numbers, row-major (Burn's `iter::<E>()`)."""
        return iter(self._array.reshape(-1).tolist())

    def __array__(self, dtype=None, copy=None):
        arr = self._array if dtype is None else self._array.astype(dtype)
        return arr.copy() if copy else arr

    # -- conversion ----------------------------------------------------------------------------
    def convert(self, dtype: Any = None) -> TensorData:
        """Cast elements to `dtype` (Burn's `convert::<E>()` / `convert_dtype`).

        Without a dtype the data is returned as is: Rust infers `E` from the tensor being built,
        and `Tensor.from_data` casts to the device's element type itself, so the books'
        `Tensor.from_data(Data([1.0, 2.0]).convert(), device)` needs no argument.
        """
        if dtype is None:
            return self
        dt = DType.from_any(dtype)
        if dt.kind is Int and self.dtype.kind is Float:
            # Casting NaN/inf to int is undefined in numpy; say so rather than produce garbage.
            if not np.all(np.isfinite(self._array)):
                raise ValueError(
                    f"TensorData.convert: cannot convert non-finite floats to {dt.value}"
                )
        if dt.kind is Int and self.dtype.kind is not Bool and self._array.size:
            # numpy wraps out-of-range ints (300 -> 44 in int8); Burn's element conversion panics.
            if not np.can_cast(self._array.dtype, dt.np):
                info = np.iinfo(dt.np)
                lo, hi = self._array.min(), self._array.max()
                if self.dtype.kind is Float:  # floats truncate toward zero first
                    lo, hi = np.trunc(lo), np.trunc(hi)
                if lo < info.min or hi > info.max:
                    raise ValueError(
                        f"TensorData.convert: values in [{lo}, {hi}] do not fit {dt.value} "
                        f"[{info.min}, {info.max}]"
                    )
        return TensorData(cast(self._array, dt.np))

    convert_dtype = convert

    # -- comparison (Burn's test helpers) ------------------------------------------------------
    def assert_eq(self, other: Any, strict: bool = True) -> None:
        """Assert equal shape and values; with `strict`, also equal dtype."""
        other = other if isinstance(other, TensorData) else TensorData(other)
        problems = []
        if self.shape != other.shape:
            problems.append(f"shape {list(self.shape)} != {list(other.shape)}")
        if strict and self.dtype != other.dtype:
            problems.append(f"dtype {self.dtype.value} != {other.dtype.value}")
        if not problems:
            a, b = self._array, other._array
            if _is_float(a.dtype) or _is_float(b.dtype):
                same = (a == b) | (np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64)))
            else:
                same = a == b
            if not np.all(same):
                problems.extend(_mismatches(a, b, ~np.asarray(same)))
        if problems:
            raise AssertionError("Tensors are not equal:\n  " + "\n  ".join(problems))

    def assert_approx_eq(self, other: Any, tolerance: Tolerance | None = None) -> None:
        """Assert equal shape and values within `tolerance` (default `Tolerance.default()`)."""
        tol = tolerance or Tolerance.default()
        other = other if isinstance(other, TensorData) else TensorData(other)
        if self.shape != other.shape:
            raise AssertionError(
                f"Tensors are not approx equal:\n  shape {list(self.shape)} != {list(other.shape)}"
            )
        ok = tol.close_mask(self._array, other._array)
        if not np.all(ok):
            lines = _mismatches(self._array, other._array, ~ok)
            raise AssertionError("Tensors are not approx equal:\n  " + "\n  ".join(lines))

    def assert_within_range(self, low: float, high: float) -> None:
        """Raises AssertionError if any element is outside [low, high) (Burn's
        `assert_within_range`).
        """
        arr = self._array
        bad = (arr < low) | (arr >= high)
        if np.any(bad):
            raise AssertionError(f"values outside [{low}, {high}): {arr[bad][:5].tolist()}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TensorData):
            return NotImplemented
        return (
            self._array.shape == other._array.shape
            and self._array.dtype == other._array.dtype
            and bool(
                np.array_equal(self._array, other._array, equal_nan=_is_float(self._array.dtype))
            )
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TensorData({self._array.tolist()!r}, shape={list(self.shape)}, dtype={self.dtype.value})"

    def __str__(self) -> str:
        """Burn's Display: the flat values as Rust's `{:?}` of a slice, e.g. `[1.0, 2.5, -3.0]`."""
        return "[" + ", ".join(format_element(v) for v in self._array.reshape(-1)) + "]"

    def __reduce__(self):
        return (TensorData.from_bytes, (self.bytes, list(self.shape), self.dtype.value))


#: The first book's name (Burn <= 0.13 `burn::tensor::Data`, renamed `TensorData` in 0.14). An alias,
#: not a separate class: old Data's fields (`value`, `shape`) and methods (`convert`, `from`,
#: `assert_approx_eq`) all exist on TensorData, and one type keeps `isinstance` and records simple.
Data = TensorData

_SUPPORTED = {d.np for d in DType if d is not DType.BF16}  # BF16: see _coerce_unsupported


def _is_float(dt: np.dtype) -> bool:
    return dt.kind == "f" or dt.name == "bfloat16"


def _from_python(value: Any, target: np.dtype | None = None) -> np.ndarray:
    """Python data as an array: floats as float32 (Burn's default element), or straight in
    `target` when that is a float dtype (0.1 as float64 must not pass through float32)."""
    try:
        arr = np.asarray(value)
    except ValueError:  # numpy >= 1.24 refuses ragged nested sequences itself
        raise TypeError(f"TensorData: ragged or non-numeric data {value!r:.80}") from None
    if arr.dtype == object:
        raise TypeError(f"TensorData: ragged or non-numeric data {value!r:.80}")
    if arr.dtype.kind == "f":
        float_target = target is not None and np.dtype(target).kind == "f"
        return cast(arr, target if float_target else np.float32)
    return arr


def python_array(value: Any) -> np.ndarray:
    """Python data (nested lists, scalars) as an array, floats as float64: for callers that
    cast to their own dtype once (`Tensor.from_data`), where TensorData's float32 default would
    round them twice (0.1 as float64 became 0.10000000149)."""
    return _from_python(value, np.dtype(np.float64))


def cast(arr: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """`arr.astype(dtype)`, where floats beyond a narrower float type's range become +-inf
    silently (IEEE rounding, like Burn's `as` casts) instead of a numpy overflow warning."""
    with np.errstate(over="ignore"):
        return arr.astype(dtype)


def _coerce_unsupported(arr: np.ndarray) -> np.ndarray:
    if arr.dtype.name == "bfloat16":
        DType.from_np(arr.dtype)  # ml_dtypes' bfloat16 (registers DType.BF16), else TypeError
        return arr
    native = arr.dtype.newbyteorder("=")
    if native in _SUPPORTED:  # e.g. big-endian int32 -> native int32, not a wider type
        return arr.astype(native)
    kind = arr.dtype.kind
    if kind == "f":
        return arr.astype(np.float64 if arr.dtype.itemsize > 8 else np.float32)
    if kind in "iu":
        # Python ints past int64 come in as uint64 (`[2**63]`): casting would wrap to -2**63.
        if kind == "u" and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
            raise ValueError(
                f"TensorData: values in [{int(arr.min())}, {int(arr.max())}] do not fit int64 "
                f"[{np.iinfo(np.int64).min}, {np.iinfo(np.int64).max}]"
            )
        return arr.astype(np.int64)
    if kind == "b":
        return arr.astype(np.bool_)
    raise TypeError(f"TensorData: unsupported element type {arr.dtype}")


def _mismatches(a: np.ndarray, b: np.ndarray, bad: np.ndarray) -> list[str]:
    idx = np.argwhere(bad)
    lines = [
        f"at {tuple(int(i) for i in ix)}: {a[tuple(ix)].item()!r} != {b[tuple(ix)].item()!r}"
        for ix in idx[:5]
    ]
    if len(idx) > 5:
        lines.append(f"... {len(idx) - 5} more mismatches ({len(idx)} of {a.size} elements)")
    return lines
