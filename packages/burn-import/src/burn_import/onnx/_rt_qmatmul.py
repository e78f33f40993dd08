"""Quantized weights and integer matmuls on burn's quantized tensors (issue 39, item 5).

`int_matmul` is ONNX MatMulInteger's `(a - a_zp) @ (b - b_zp)` in int32, computed by the
backend's `q_matmul` of two int8 quantized tensors (NdArray: its native int8 x int8 -> int32
kernel; other backends: their `q_matmul`). 8-bit operands of either signedness are brought to
int8 by an offset (uint8 - 128), and the offsets and zero points come back as exact integer
corrections (with a8 = a - oa, b8 = b - ob, ca = oa - a_zp, cb = ob - b_zp):

    (a - a_zp) @ (b - b_zp) = a8 @ b8 + ca * colsum(b8) + rowsum(a8) * cb + K * ca * cb

`q_matmul` returns float32 `acc * 1 * 1`; |acc| <= K * 128 * 128, exact in float32 while K <=
1024, so longer sums are split along K in chunks of 1024 and added in int32.
"""

from __future__ import annotations

from burn_tensor import DType, Tensor
from burn_tensor.quantization import QuantScheme, QuantValue

from ._rt_index import _per_axis

CHUNK = 1024  # 1024 * 128 * 128 = 2^24: every int32 sum of a chunk is exact in float32
# packed (Burn's default store): the GPU backends' int8 kernel reads packed words
_SCHEME = QuantScheme(value=QuantValue.Q8F)


def dequantize_weight(w: Tensor, scale, axis: int, block: int, rank: int, dtype) -> Tensor:
    """The float value of a quantized weight field: `w.dequantize()` (scale * q), then the
    ONNX per-axis / block scales when the field holds a unit scale (`scale` not None)."""
    y = w.dequantize()
    if scale is not None:  # float64 product, one rounding to dtype, as ops.dequantize
        s = _per_axis(scale, axis, block, rank, y)
        return (y.cast(DType.F64) * s.cast(DType.F64)).cast(dtype)
    return y if y.dtype == dtype else y.cast(dtype)


def _int8(t: Tensor):
    """(int8 values as an I32 tensor, offset): uint8 is shifted by -128 into int8's range."""
    t32 = t.cast(DType.I32)
    return (t32 - 128, 128) if t.dtype == DType.U8 else (t32, 0)


def _weight_ints(b: Tensor) -> Tensor:
    """The integers of a unit-scale quantized weight (exact: q * 1.0 in float)."""
    return b.dequantize().int().cast(DType.I32)


def _qmm(a8: Tensor, b: Tensor) -> Tensor:
    """a8 [M, K] (I32 values in int8's range) @ b [K, N] (quantized unit scale, or I32 in
    int8's range) in int32, through `q_matmul` in exact chunks."""
    ones = Tensor.from_floats([1.0], a8.device)
    k = a8.dims()[1]
    if b.is_quantized() and k <= CHUNK:
        aq = Tensor.from_quantized_values(a8, ones, _SCHEME)
        return aq.matmul(b).int().cast(DType.I32)
    bi = _weight_ints(b) if b.is_quantized() else b
    acc = None
    for k0 in range(0, k, CHUNK):
        k1 = min(k, k0 + CHUNK)
        aq = Tensor.from_quantized_values(a8.slice(slice(None), slice(k0, k1)), ones, _SCHEME)
        bq = Tensor.from_quantized_values(bi.slice(slice(k0, k1), slice(None)), ones, _SCHEME)
        part = aq.matmul(bq).int().cast(DType.I32)
        acc = part if acc is None else acc + part
    return acc


def int_matmul(a: Tensor, b: Tensor, a_zp, b_zp, ra: int, b_sum=None) -> Tensor:
    """ONNX `(a - a_zp) @ (b - b_zp)` in int32 (see module docstring).

    Shapes: a [..., M, K] or [K] (u8/i8), b [K, N] (u8/i8 Int, or a unit-scale Q8F quantized
    weight whose zero point was shifted with it), a_zp one value, b_zp one value or [N];
    `b_sum` the column sums of b's int8 values [N] when the importer computed them.
    """
    if b.is_quantized():
        b8, ob = b, 0
    else:
        b8, ob = _int8(b)
    a8, oa = _int8(a)
    k = a8.dims()[-1]
    lead = a8.dims()[:-1]
    a2 = a8.reshape([-1, k])
    n = b8.dims()[1]
    acc = _qmm(a2, b8)
    ca = oa - (0 if a_zp is None else a_zp.cast(DType.I32).reshape([1, 1]))
    cb = ob - (0 if b_zp is None else b_zp.cast(DType.I32).reshape([1, -1]))
    if not _is_zero(ca):
        if b_sum is None:
            b_sum = (_weight_ints(b8) if b8.is_quantized() else b8).sum_dim(0)
        acc = acc + b_sum.cast(DType.I32).reshape([1, n]) * ca
    if not _is_zero(cb):
        acc = acc + a2.sum_dim(1) * cb
        if not _is_zero(ca):
            acc = acc + cb * ca * k
    return acc.reshape(lead + [n])


def _is_zero(c) -> bool:
    return isinstance(c, int) and c == 0


def qdq_matmul(q, q_zp, q_scale, w, w_scale, bias, ra: int, w_sum=None) -> Tensor:
    """DequantizeLinear(q) @ DequantizeLinear(w) (+ bias): `int_matmul(q, w)` (exact int32 on
    the backend's int8 `q_matmul`) times q_scale * w_scale in float32.

    Shapes: q [..., M, K] (u8/i8), w [K, N] (unit-scale quantized), q_scale one value, w_scale
    one value or [N], bias [N] -> [..., M, N] float32.
    """
    acc = int_matmul(q, w, q_zp, None, ra, w_sum).float()
    r = acc.rank()
    y = acc * (q_scale.reshape([1]) * w_scale.reshape([-1])).unsqueeze(r)
    return y if bias is None else y + bias.unsqueeze(r)
