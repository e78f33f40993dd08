"""Precision settings: which float and int element types a record is written with (Burn's
`PrecisionSettings`)."""

from __future__ import annotations

from typing import ClassVar

from ._dtypes import DType


class PrecisionSettings:
    """Element types used to serialize float and int tensors; bool tensors are never converted.

    Subclass and set `float_dtype` / `int_dtype` to define your own settings, as Burn lets you
    implement the `PrecisionSettings` trait.

    Example:
        >>> HalfPrecisionSettings().float_dtype, HalfPrecisionSettings().int_dtype
        (DType.F16, DType.I16)
    """

    float_dtype: ClassVar[DType] = DType.F32
    int_dtype: ClassVar[DType] = DType.I32

    @property
    def float_name(self) -> str:
        """Burn's element type name of the float type (`"f32"`), stored in the record metadata."""
        return _ELEM_NAME[self.float_dtype]

    @property
    def int_name(self) -> str:
        return _ELEM_NAME[self.int_dtype]

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    def __repr__(self) -> str:
        return type(self).__name__


class DoublePrecisionSettings(PrecisionSettings):
    """Floats as f64, ints as i64.

    Example:
        >>> DoublePrecisionSettings().float_name
        'f64'
    """

    float_dtype = DType.F64
    int_dtype = DType.I64


class FullPrecisionSettings(PrecisionSettings):
    """Floats as f32, ints as i32 (the default of most recorders).

    Example:
        >>> FullPrecisionSettings().int_name
        'i32'
    """

    float_dtype = DType.F32
    int_dtype = DType.I32


class HalfPrecisionSettings(PrecisionSettings):
    """Floats as f16, ints as i16 (`CompactRecorder`).

    Example:
        >>> HalfPrecisionSettings().float_name
        'f16'
    """

    float_dtype = DType.F16
    int_dtype = DType.I16


_ELEM_NAME = {
    DType.F64: "f64",
    DType.F32: "f32",
    DType.F16: "f16",
    DType.I64: "i64",
    DType.I32: "i32",
    DType.I16: "i16",
    DType.I8: "i8",
    DType.U8: "u8",
    DType.BOOL: "bool",
    DType.U16: "u16",
    DType.U32: "u32",
    DType.U64: "u64",
}


def resolve_settings(settings: object, default: type[PrecisionSettings]) -> PrecisionSettings:
    """Accept a settings instance, a settings class (Burn's type parameter) or None (default)."""
    if settings is None:
        return default()
    if isinstance(settings, type) and issubclass(settings, PrecisionSettings):
        return settings()
    if isinstance(settings, PrecisionSettings):
        return settings
    raise TypeError(
        f"precision settings must be a PrecisionSettings class or instance, got {settings!r}"
    )
