"""Element types as PyTorch and safetensors name them, and their conversion to Burn's dtypes.

Every type is read as its raw little-endian layout first (`RAW`), then turned into a dtype that
`burn_tensor.DType` has (`to_burn`): bf16 is widened to f32 exactly by bit manipulation (a bf16 is
the upper half of an f32), bool bytes become `!= 0`, and unsigned 16/32/64-bit ints become int64
(uint64 only when every value fits). Complex, float8 and quantized types are refused by name.
"""

from __future__ import annotations

import numpy as np

from ._errors import RecordImportError

# torch dtype name -> raw numpy layout (little-endian); bf16 is read as its 16-bit pattern.
RAW: dict[str, str] = {
    "float64": "<f8",
    "float32": "<f4",
    "float16": "<f2",
    "bfloat16": "<u2",
    "int64": "<i8",
    "int32": "<i4",
    "int16": "<i2",
    "int8": "i1",
    "uint8": "u1",
    "bool": "u1",
    "uint16": "<u2",
    "uint32": "<u4",
    "uint64": "<u8",
}
# Types torch can write that Burn has no counterpart for: refused with a clear error.
UNSUPPORTED = {
    "complex32",
    "complex64",
    "complex128",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "qint8",
    "quint8",
    "qint32",
    "quint4x2",
    "quint2x4",
}

# Legacy typed storage classes (`torch.FloatStorage`, ...) -> element type. `UntypedStorage`
# holds bytes; `_rebuild_tensor_v3` then names the real dtype separately.
STORAGE_DTYPE: dict[str, str] = {
    "DoubleStorage": "float64",
    "FloatStorage": "float32",
    "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16",
    "LongStorage": "int64",
    "IntStorage": "int32",
    "ShortStorage": "int16",
    "CharStorage": "int8",
    "ByteStorage": "uint8",
    "BoolStorage": "bool",
    "UntypedStorage": "uint8",
    "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128",
    "QInt8Storage": "qint8",
    "QUInt8Storage": "quint8",
    "QInt32Storage": "qint32",
    "QUInt4x2Storage": "quint4x2",
    "QUInt2x4Storage": "quint2x4",
}

# safetensors dtype codes <-> torch names.
SAFETENSORS_DTYPE: dict[str, str] = {
    "F64": "float64",
    "F32": "float32",
    "F16": "float16",
    "BF16": "bfloat16",
    "I64": "int64",
    "I32": "int32",
    "I16": "int16",
    "I8": "int8",
    "U8": "uint8",
    "BOOL": "bool",
    "U16": "uint16",
    "U32": "uint32",
    "U64": "uint64",
    "F8_E4M3": "float8_e4m3fn",
    "F8_E5M2": "float8_e5m2",
    "C64": "complex64",
}
SAFETENSORS_CODE: dict[str, str] = {
    torch_name: code for code, torch_name in SAFETENSORS_DTYPE.items() if torch_name in RAW
}

_I64_MAX = np.iinfo(np.int64).max


def itemsize(name: str) -> int:
    """Bytes per element of a torch dtype name (unsupported types included, for bounds checks)."""
    if name in RAW:
        return np.dtype(RAW[name]).itemsize
    sizes = {"complex32": 4, "complex64": 8, "complex128": 16, "qint32": 4}
    return sizes.get(name, 1)


def raw_dtype(name: str, big_endian: bool = False) -> np.dtype:
    """The numpy layout the bytes of `name` are read with (byte order as the file says)."""
    dt = np.dtype(RAW[name])
    return dt.newbyteorder(">") if big_endian and dt.itemsize > 1 else dt


def check_supported(name: str, key: str) -> None:
    """Refuse a dtype Burn cannot hold, naming the tensor."""
    if name not in RAW:
        what = "is not supported" if name in UNSUPPORTED else "is unknown"
        raise RecordImportError(
            f"{key}: element type {name} {what}; Burn tensors hold f64/f32/f16 (bf16 is widened "
            "to f32), i64/i32/i16/i8, u8 and bool"
        )


def bf16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    """Widen bf16 bit patterns (uint16) to float32 exactly: the bf16 is the f32's upper half.

    Example:
        >>> bf16_bits_to_f32(np.array([0x3F80, 0xC000, 0x7F80], np.uint16)).tolist()
        [1.0, -2.0, inf]
    """
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def to_burn(raw: np.ndarray, name: str, key: str) -> np.ndarray:
    """Turn an array (or strided view) of raw layout `RAW[name]` into a new C-contiguous native
    array of a Burn dtype: exactly one copy, which also detaches it from the file's buffer.

    Example:
        >>> to_burn(np.array([0, 1, 7], np.uint8), "bool", "mask").tolist()
        [False, True, True]
    """
    if name == "bfloat16":
        return bf16_bits_to_f32(raw)
    if name == "bool":
        return raw != 0
    if name in ("uint16", "uint32"):
        return raw.astype(np.int64)
    if name == "uint64":
        if raw.size and int(raw.max()) > _I64_MAX:
            raise RecordImportError(
                f"{key}: uint64 values up to {int(raw.max())} do not fit int64, the widest Burn "
                "int type"
            )
        return raw.astype(np.int64)
    return raw.astype(raw.dtype.newbyteorder("="), order="C", copy=True)
