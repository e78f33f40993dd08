"""Static 8-bit activations: the convolution of an input that is already quantized (ONNX's QDQ
pattern `DequantizeLinear(x_q, s_x, zp_x) -> Conv(int8 weight)`), on its integers.

    y[n, co] = float32(sum((x_q - zp_x) * w[co])) * float32(s_x * s_w[co]) + bias[co]

x_q uint8 or int8 with one scale and zero point, w int8 (any value, -128 included) per tensor
or per output channel; padding holds zp_x, so it adds 0 (as ONNX pads the float value with 0).
The sum is exact in int32 (`_native/q8conv.c`'s `q8_conv2d_static`: AVX-512 VNNI u8 x s8, or a
16-bit `vpmaddwd` core, or plain C), the two scales are multiplied once in float64 and rounded
to float32. Tasks depend on the shapes only, so every thread count gives the same bits.

The weight's dense int8 rows (and their int16 copy where the build has no VNNI) are kept while
the weight lives (`_quant_dynamic._prepared`). `conv2d` returns None where it does not apply
(no native library, groups != 1, a weight that is not 8-bit per tensor): the caller then
dequantizes and runs the float conv.
"""

from __future__ import annotations

import numpy as np
from burn_tensor.quantization import QuantizedPrimitive

from . import _native_quant
from ._quant_dynamic import _int8_weight, _prepared, threads

#: the longest reduction whose int32 sum cannot overflow (K * 255 * 128 < 2^31)
MAX_K = 65792


def _rows(backend, lib, weight: QuantizedPrimitive, co: int, kk: int):
    """(int8 rows [co, kp], int16 rows or None, row sums [co] int32, kp): the weight's
    integers, zero past K (the sums: the zero point's correction on VNNI, kept rather than
    recomputed per call: one pass over the weight, ~1 ms of resnet18's forward)."""
    kp = -(-kk // 4) * 4

    def make():
        q = np.asarray(backend.q_unpack(weight.values, weight.scheme, weight.shape))
        rows = np.zeros((co, kp), np.int8)
        rows[:, :kk] = q.reshape(co, kk)
        return rows

    rows = _prepared("conv2d", weight, make)  # the same rows as the dynamic conv
    w16 = None
    if lib.q8_static_w16():
        w16 = _prepared("conv2d_w16", weight, lambda: rows.astype(np.int16))
    sums = _prepared("conv2d_sums", weight, lambda: rows.sum(1, dtype=np.int32))
    return rows, w16, sums, kp


def conv2d(backend, x, x_scale, x_zero_point, weight, weight_scales, bias, stride, pads, dilation,
           groups, out_scale=None, out_zero_point=None):
    """conv2d of 8-bit x [b, c, h, w] (numpy uint8/int8) dequantized by (x_scale, x_zero_point)
    with the 8-bit weight [co, c, kh, kw] whose stored scale times `weight_scales` (one value,
    [co], or None for 1) is each channel's scale; `pads` (top, left, bottom, right) as ONNX's.
    float32 [b, co, oh, ow]; with `out_scale` (float32, one value) and `out_zero_point` (uint8 /
    int8, one value): that float output quantized as ONNX's QuantizeLinear does it (float32
    division, round half to even, + zero point, saturated), the same bytes, in the zero point's
    type. None when not covered."""
    lib = _native_quant.lib()
    ws = _int8_weight(weight)
    if (
        lib is None
        or ws is None
        or x.dtype not in (np.uint8, np.int8)
        or x.ndim != 4
        or len(weight.shape) != 4
        or groups != 1
        or weight.shape[1] != x.shape[1]
    ):
        return None
    bsz, c, h, wd = x.shape
    co, _, kh, kw = weight.shape
    (sh, sw), (ph, pw, pb, pr), (dh, dw) = stride, pads, dilation
    oh = (h + ph + pb - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + pw + pr - dw * (kw - 1) - 1) // sw + 1
    kk = c * kh * kw
    if min(bsz, co, oh, ow) <= 0 or kk == 0 or kk > MAX_K:
        return None
    sx = np.asarray(x_scale, np.float64).reshape(-1)
    zp = np.asarray(x_zero_point).reshape(-1) if x_zero_point is not None else np.zeros(1, np.int64)
    wsc = np.asarray(1.0 if weight_scales is None else weight_scales, np.float64).reshape(-1) * ws
    if sx.size != 1 or zp.size != 1 or wsc.size not in (1, co):
        return None
    info = np.iinfo(x.dtype)
    if not info.min <= int(zp[0]) <= info.max:  # ONNX: the zero point has x's type
        return None
    ykind, ys, yzp, ydt = 0, 0.0, 0, np.float32
    if out_scale is not None:
        s_y, z_y = np.asarray(out_scale).reshape(-1), np.asarray(out_zero_point).reshape(-1)
        if s_y.dtype != np.float32 or s_y.size != 1 or z_y.size != 1:
            return None
        if z_y.dtype not in (np.uint8, np.int8):
            return None
        ykind, ys, yzp, ydt = (2 if z_y.dtype == np.int8 else 1), float(s_y[0]), int(z_y[0]), z_y.dtype
    chs = (sx[0] * wsc).astype(np.float32)  # one rounding of the float64 product
    if chs.size == 1:
        chs = np.full(co, chs[0], np.float32)
    rows, w16, sums, kp = _rows(backend, lib, weight, co, kk)
    xc = np.ascontiguousarray(x)
    out = np.empty((bsz, co, oh, ow), ydt)
    b = None if bias is None else np.ascontiguousarray(bias, np.float32).reshape(co)
    rc = lib.q8_conv2d_static(
        xc.ctypes.data, int(x.dtype == np.int8), int(zp[0]), bsz, c, h, wd, rows.ctypes.data,
        None if w16 is None else w16.ctypes.data, sums.ctypes.data, kp, co, kh, kw, chs.ctypes.data,
        None if b is None else b.ctypes.data, out.ctypes.data, ys, yzp, ykind, oh, ow, sh, sw, ph,
        pw, dh, dw,
        threads(backend, bsz * oh * ow * co * kk),
    )  # fmt: skip
    if rc != 0:
        raise MemoryError(f"static quantized conv2d: no memory for the input {list(x.shape)} (rc {rc})")
    return out
