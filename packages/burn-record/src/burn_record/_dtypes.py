"""The one place `burn_record` imports `burn_tensor`, plus the dtype tables of the file formats."""

from __future__ import annotations

from burn_tensor import DType, TensorData

__all__ = ["DType", "TensorData", "DTYPE_BY_NAME", "DTYPE_BY_CODE", "DTYPE_CODE"]

# Named formats store Burn's serde name of the dtype ("F32"); the positional format stores a code.
# Codes are part of the on-disk layout: never renumber, only append.
DTYPE_BY_NAME = {d.name: d for d in DType}
DTYPE_CODE = {
    DType.F64: 0,
    DType.F32: 1,
    DType.F16: 2,
    DType.I64: 3,
    DType.I32: 4,
    DType.I16: 5,
    DType.I8: 6,
    DType.U8: 7,
    DType.BOOL: 8,
    DType.U16: 9,
    DType.U32: 10,
    DType.U64: 11,
}
DTYPE_BY_CODE = {c: d for d, c in DTYPE_CODE.items()}
