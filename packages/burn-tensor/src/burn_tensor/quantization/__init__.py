"""Quantization (Burn's `burn::tensor::quantization`): schemes, quantized tensors, references.

Example:
    >>> from burn_tensor import Tensor
    >>> from burn_tensor.quantization import QuantScheme, QuantValue
    >>> from burn_ndarray import NdArray
    >>> t = Tensor.from_floats([-1.0, 0.5, 1.0], NdArray().device())
    >>> q = t.quantize_dynamic(QuantScheme(value=QuantValue.Q8S))
    >>> [round(v, 4) for v in q.dequantize().tolist()]
    [-1.0, 0.5039, 1.0]
"""

from ._data import QuantizedData
from ._ops import QuantOps
from ._primitive import QuantizedPrimitive, is_quantized_primitive
from ._reference import dequantize_ref, pack_ref, quantize_ref, scales_ref, unpack_ref
from ._scheme import (
    Calibration,
    QFloat,
    QuantAcc,
    QuantLevel,
    QuantMode,
    QuantParam,
    QuantPropagation,
    QuantScheme,
    QuantStore,
    QuantValue,
)
from ._tensor_quant import QuantizationParameters, compute_q_params

__all__ = [
    "Calibration",
    "QFloat",
    "QuantAcc",
    "QuantLevel",
    "QuantMode",
    "QuantOps",
    "QuantParam",
    "QuantPropagation",
    "QuantScheme",
    "QuantStore",
    "QuantValue",
    "QuantizationParameters",
    "QuantizedData",
    "QuantizedPrimitive",
    "compute_q_params",
    "dequantize_ref",
    "is_quantized_primitive",
    "pack_ref",
    "quantize_ref",
    "scales_ref",
    "unpack_ref",
]
