"""Element types (`DType`) and tensor kinds (`Float`, `Int`, `Bool`)."""

from __future__ import annotations

import enum

import numpy as np


class TensorKind(enum.Enum):
    """The kind of a tensor: which family of operations it supports.

    Burn encodes the kind as a type parameter (`Tensor<B, D, Int>`); here it is a runtime value checked
    before every dispatch.
    """

    FLOAT = "Float"
    INT = "Int"
    BOOL = "Bool"

    # Identity hash (members are singletons compared by identity): Enum's own __hash__ is a
    # Python function, run on every dict lookup keyed by a kind or dtype (op tables, dtype maps).
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return self.value

    __str__ = __repr__


Float = TensorKind.FLOAT
Int = TensorKind.INT
Bool = TensorKind.BOOL


class DType(enum.Enum):
    """Element type of a tensor, named as in Burn (`DType::F32` -> `DType.F32`).

    Example:
        >>> DType.F32.kind, DType.F32.size, DType.F32.name
        (Float, 4, 'F32')
    """

    F64 = "float64"
    F32 = "float32"
    F16 = "float16"
    #: bfloat16 (8-bit exponent, 7-bit mantissa); its numpy dtype is ml_dtypes', imported on
    #: first use (`pip install 'burn-tensor[bf16]'`). Backends that cannot run it refuse it.
    BF16 = "bfloat16"
    I64 = "int64"
    I32 = "int32"
    I16 = "int16"
    I8 = "int8"
    U8 = "uint8"
    BOOL = "bool"
    # appended after BOOL so the members above keep their order (Burn's U16/U32/U64)
    U16 = "uint16"
    U32 = "uint32"
    U64 = "uint64"

    __hash__ = object.__hash__  # as TensorKind's

    # Values are also callable so `tensor.dtype()` reads like Burn while `tensor.dtype` reads like torch.
    def __call__(self) -> DType:
        return self

    def __repr__(self) -> str:
        return f"DType.{self.name}"

    @property
    def np(self) -> np.dtype:
        """The numpy dtype with the same layout (ml_dtypes' bfloat16 for BF16)."""
        try:
            return _NP[self]
        except KeyError:
            return _load_bf16()

    @property
    def kind(self) -> TensorKind:
        return _KIND[self]

    @property
    def size(self) -> int:
        """Bytes per element."""
        return 2 if self is DType.BF16 else _NP[self].itemsize

    def is_float(self) -> bool:
        return _KIND[self] is Float

    def is_int(self) -> bool:
        return _KIND[self] is Int

    def is_bool(self) -> bool:
        return self is DType.BOOL

    @staticmethod
    def from_any(value: object) -> DType:
        """Accept a DType, its value (`"float32"`), its name (`"F32"`, `"f32"`) or a numpy dtype."""
        if isinstance(value, DType):
            return value
        if isinstance(value, str):
            key = value.strip()
            if key in _BY_NAME:
                return _BY_NAME[key]
            if key.upper() in DType.__members__:
                return DType[key.upper()]
        try:
            return DType.from_np(np.dtype(value))  # type: ignore[arg-type]
        except TypeError:
            pass
        raise TypeError(
            f"unknown dtype {value!r}: expected one of {[d.value for d in DType]} or a DType"
        )

    @staticmethod
    def from_np(dtype: np.dtype) -> DType:
        try:
            return _FROM_NP[dtype]
        except KeyError:
            if getattr(dtype, "is_quantized", False):  # QFloat: a quantized tensor's dtype
                return dtype  # type: ignore[return-value]
            try:
                dt = np.dtype(dtype)
                if dt.name == "bfloat16" and dt == _load_bf16():
                    return DType.BF16
                return _FROM_NP[dt]
            except (KeyError, TypeError, ImportError):
                raise TypeError(f"numpy dtype {dtype} has no burn DType") from None


def _load_bf16() -> np.dtype:
    """ml_dtypes' bfloat16, registered in the dtype tables on first use; an ImportError naming
    the extra to install when ml_dtypes is missing."""
    try:
        import ml_dtypes
    except ImportError as exc:
        raise ImportError(
            "DType.BF16 needs ml_dtypes for its numpy dtype: pip install 'burn-tensor[bf16]' "
            f"(or ml_dtypes) ({exc})"
        ) from exc
    dt = np.dtype(ml_dtypes.bfloat16)
    _NP[DType.BF16] = dt
    _FROM_NP[dt] = DType.BF16
    return dt


_NP = {d: np.dtype(d.value) for d in DType if d is not DType.BF16}
_FROM_NP = {v: k for k, v in _NP.items()}
_BY_NAME = {d.value: d for d in DType}
_KIND = {d: (Float if "float" in d.value else Bool if d is DType.BOOL else Int) for d in DType}

FLOAT_DTYPES = (DType.F64, DType.F32, DType.F16, DType.BF16)
INT_DTYPES = (
    DType.I64,
    DType.I32,
    DType.I16,
    DType.I8,
    DType.U8,
    DType.U16,
    DType.U32,
    DType.U64,
)
