"""ONNX element types and their burn_tensor `DType` (the ones burn-py tensors can hold)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

# ONNX elem type -> (DType member name, numpy dtype, kind)
DTYPES: dict[int, tuple[str, np.dtype, str]] = {
    TensorProto.FLOAT: ("F32", np.dtype(np.float32), "Float"),
    TensorProto.DOUBLE: ("F64", np.dtype(np.float64), "Float"),
    TensorProto.FLOAT16: ("F16", np.dtype(np.float16), "Float"),
    TensorProto.INT64: ("I64", np.dtype(np.int64), "Int"),
    TensorProto.INT32: ("I32", np.dtype(np.int32), "Int"),
    TensorProto.INT16: ("I16", np.dtype(np.int16), "Int"),
    TensorProto.INT8: ("I8", np.dtype(np.int8), "Int"),
    TensorProto.UINT8: ("U8", np.dtype(np.uint8), "Int"),
    TensorProto.BOOL: ("BOOL", np.dtype(np.bool_), "Bool"),
    # burn has no u16/u32/u64: their values are held in the next wider signed type (u64 beyond
    # 2^63 is out of range) and converted back to the declared type at the graph's outputs.
    TensorProto.UINT16: ("I32", np.dtype(np.uint16), "Int"),
    TensorProto.UINT32: ("I64", np.dtype(np.uint32), "Int"),
    TensorProto.UINT64: ("I64", np.dtype(np.uint64), "Int"),
}
FLOATS = {TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16}
INTS = {
    TensorProto.INT64,
    TensorProto.INT32,
    TensorProto.INT16,
    TensorProto.INT8,
    TensorProto.UINT8,
    TensorProto.UINT16,
    TensorProto.UINT32,
    TensorProto.UINT64,
}


def type_name(elem: int) -> str:
    try:
        return TensorProto.DataType.Name(elem).lower()
    except ValueError:
        return f"type {elem}"


def dtype_code(elem: int) -> str:
    """`DType.F32` for FLOAT, ..."""
    return f"DType.{DTYPES[elem][0]}"


def np_dtype(elem: int) -> np.dtype:
    return DTYPES[elem][1]


def elem_of_np(dtype: np.dtype) -> int | None:
    for elem, (_, npd, _) in DTYPES.items():
        if npd == np.dtype(dtype):
            return elem
    return None


class VType:
    """What the importer knows of a value: element type and shape (None dims are dynamic).

    `shape is None` means the rank itself is unknown. Rank-0 ONNX values are held as `[1]`
    tensors at run time (burn tensors have rank >= 1); `rank` is the ONNX rank.
    """

    __slots__ = ("elem", "shape")

    def __init__(self, elem: int, shape: list[int | None] | None):
        self.elem, self.shape = elem, shape

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    @property
    def static(self) -> bool:
        return self.shape is not None and all(isinstance(d, int) for d in self.shape)

    def __repr__(self) -> str:
        return f"VType({type_name(self.elem)}, {self.shape})"


def vtype_of(type_proto) -> VType | None:
    if not type_proto.HasField("tensor_type"):
        return None
    tt = type_proto.tensor_type
    shape = None
    if tt.HasField("shape"):
        shape = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
    return VType(tt.elem_type, shape)
