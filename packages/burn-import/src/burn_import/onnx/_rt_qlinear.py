"""ONNX QLinearMatMul: a matmul of quantized integers, requantized to the output's scale.

y = saturate(round_half_even((a - a_zp) @ (b - b_zp) * (a_scale * b_scale / y_scale)) + y_zp)

The integer product is exact in float64 (8-bit products summed stay far below 2^53). The
multiplier is computed in the scales' own type, as ONNX's reference does, so float16 scales
give the float16-rounded multiplier; the multiply, the zero point and the rounding are then in
float64.
"""

from __future__ import annotations

from burn_tensor import DType

from ._rt_nn import matmul


def _centered(t, zp):
    t = t.float().cast(DType.F64)
    return t if zp is None else t - zp.float().cast(DType.F64).reshape([1] * t.rank())


def qlinear_matmul(
    a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, ra, rb, dtype, bounds, b_sum=None
):
    """Shapes: a [..., m, k], b [..., k, n] (numpy matmul rules), scales and zero points of
    one element -> [..., m, n] in `dtype`, saturated to `bounds` (the declared type's range).

    A matrix b (rank 2: an Int tensor, or the importer's unit-scale quantized weight) goes
    through `int_matmul` (the backend's int8 `q_matmul`); a batched b is emulated in float64.
    """
    if rb == 2:
        from ._rt_qmatmul import int_matmul

        c = int_matmul(a, b, a_zp, b_zp, ra, b_sum).float().cast(DType.F64)
    else:
        c = matmul(_centered(a, a_zp), _centered(b, b_zp), ra, rb)
    mult = (a_scale * b_scale / y_scale).cast(DType.F64).reshape([1] * c.rank())
    d = (c * mult).round()
    if y_zp is not None:
        d = d + y_zp.float().cast(DType.F64).reshape([1] * c.rank())
    lo, hi = bounds
    return d.clamp(float(lo), float(hi)).int().cast(dtype)


def qlinear_conv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, bias, geometry, dtype, bounds):
    """ONNX QLinearConv: ConvInteger of the centered inputs plus the int32 bias, requantized
    with x_scale * w_scale / y_scale (w_scale per tensor or per output channel) as above.

    `geometry` is (strides, pads, dilations, group) of the convolution.
    """
    from ._rt_index import conv_integer

    strides, pads, dil, group = geometry
    c = conv_integer(x, w, x_zp, w_zp, strides, pads, dil, group).float().cast(DType.F64)
    shape = [1, -1] + [1] * (c.rank() - 2)
    if bias is not None:
        c = c + bias.float().cast(DType.F64).reshape(shape)
    mult = (x_scale.reshape([1]) * w_scale.reshape([-1]) / y_scale.reshape([1])).cast(DType.F64)
    d = (c * mult.reshape(shape)).round()
    if y_zp is not None:
        d = d + y_zp.float().cast(DType.F64).reshape([1] * c.rank())
    lo, hi = bounds
    return d.clamp(float(lo), float(hi)).int().cast(dtype)
