"""ONNX's QDQ convolution on integers: `DequantizeLinear(x_q, s_x, zp_x) -> Conv(w)` with a
quantized weight layer (`_qweights.conv_layout`).

    y = s_x * s_w[co] * sum((x_q - zp_x) * w) + bias        (padding: x_q = zp_x, adds 0)

With `out_scale` and `out_zero_point` (a QuantizeLinear that is the conv's only reader, fused
by the importer) the result is y quantized as that node would (the same bytes as the unfused
pair on the same float y).

A backend with a `qdq_conv2d` op (NdArray: `_quant_static`, exact int32 sums on its native
int8 kernels) runs it on x_q's integers; any other backend, or where that op declines (no
native library, grouped convs, a weight that is not 8-bit), dequantizes x_q and runs the layer
(the float conv of the same values; results differ from the integer path by float rounding).
"""

from __future__ import annotations

from burn_tensor import DType, Tensor, TensorKind

from ._rt_index import dequantize, quantize

_BOUNDS = {DType.U8: (0, 255), DType.I8: (-128, 127)}


def qdq_conv(
    layer, q: Tensor, zp, scale: Tensor, channel_scales=None, bias=None, out_scale=None,
    out_zero_point=None,
) -> Tensor:
    """`layer` (a burn_nn Conv2d holding the quantized weight) applied to DequantizeLinear(q).

    Args:
        layer: Conv2d whose weight is quantized (per tensor; or with a unit scale, then
            `channel_scales` [c_out] are the ONNX per-channel scales and `bias` [c_out] is added
            after them).
        q: the 8-bit activation [n, c_in, h, w] (U8 or I8); zp: its zero point (one value, or
            None for 0); scale: its scale (one float32 value).
        out_scale, out_zero_point: the output's QuantizeLinear (one float32, one U8 / I8 value).

    Returns: float32 [n, c_out, h', w'], or with out_scale the quantized output (U8 / I8).
    """
    w = layer.weight.val()
    hook = getattr(q.device.backend, "qdq_conv2d", None)
    if hook is not None and w.is_quantized() and q.dtype in (DType.U8, DType.I8):
        pads = layer.padding.pads(q.dims()[2:], layer.kernel_size, layer.stride, layer.dilation)
        b = bias if bias is not None else (None if layer.bias is None else layer.bias.val())
        out = hook(
            q.into_primitive(),
            scale.into_primitive(),
            None if zp is None else zp.into_primitive(),
            w.into_primitive(),
            None if channel_scales is None else channel_scales.into_primitive(),
            None if b is None else b.into_primitive(),
            tuple(layer.stride),
            (pads[0][0], pads[1][0], pads[0][1], pads[1][1]),
            tuple(layer.dilation),
            layer.groups,
            None if out_scale is None else out_scale.into_primitive(),
            None if out_zero_point is None else out_zero_point.into_primitive(),
        )
        if out is not None:
            kind = TensorKind.FLOAT if out_scale is None else TensorKind.INT
            return Tensor.from_primitive(out, kind, q.device)
    y = layer.forward(dequantize(q, scale, zp, 1, 0, q.rank(), DType.F32))
    if channel_scales is not None:
        y = y * channel_scales.reshape([1, -1, 1, 1])
    y = y if bias is None else y + bias.reshape([1, -1, 1, 1])
    if out_scale is None:
        return y
    dt = out_zero_point.dtype
    if dt not in _BOUNDS:
        raise TypeError(f"qdq_conv: out_zero_point must be U8 or I8 (the output's type), got {dt}")
    return quantize(y, out_scale, out_zero_point, 1, 0, 4, dt, None, _BOUNDS[dt])
