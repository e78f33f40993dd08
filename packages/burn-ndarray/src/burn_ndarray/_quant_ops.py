"""NdArray's quantized ops: numpy-view packing and the native kernels of `_native_quant`.

Overrides of burn_tensor's `QuantOps` defaults (same results, checked by the conformance suite):
- `q_pack` / `q_unpack`: little-endian byte views (the packing order of Burn's u32 words is the
  memory order of the values on a little-endian CPU) instead of one op per value of a word.
- `q_matmul`: both operands 8-bit, per tensor, rank 2, float32 backend: int8 x int8 -> int32
  (`q8gemm.c`'s `q8_mm`: VNNI / AVX2 tiles, OpenMP over `num_threads`; y packed once while it
  lives), then `acc * (scale_x * scale_y)` in float32.
- `q_linear` (and `q_matmul` of a float lhs with a quantized rank-2 rhs): a quantized weight [d_in, d_out] (any bits, per tensor or per block, packed; or
  native int8 with d_out % 4 == 0), float32 input: `qlin_packed` reads the packed words directly.
- with `NdArray(quantize_activations=True)`: `q_linear` and `q_conv2d` (groups 1) with an 8-bit
  per-tensor weight quantize their float32 input on the fly and run an int8 x int8 -> int32 GEMM
  (`_quant_dynamic`); other weights stay weight-only.
- `qdq_conv2d` (NdArray's own, not a `QuantOps` op; burn-import's `ops.qdq_conv` calls it where
  the backend has it): the conv of an 8-bit input with a zero point (ONNX QDQ) on its integers
  (`_quant_static`); None where it does not apply, and the caller dequantizes.
Anything else takes the default (dequantize, then the float op).
"""

from __future__ import annotations

import sys

import numpy as np
from burn_tensor import DType
from burn_tensor.quantization import QuantizedPrimitive, QuantStore

from . import _native_quant, _quant_dynamic, _quant_static

_LITTLE = sys.byteorder == "little"


def _as_words(qx: QuantizedPrimitive):
    """int32 words of a quantized primitive, packed along the last dim (None when not viewable)."""
    v = np.ascontiguousarray(qx.values)
    if qx.scheme.store is QuantStore.NATIVE:
        if qx.shape[-1] % 4:
            return None
        return v.view(np.int32)
    return v


class NdArrayQuantOps:
    def q_pack(self, q, scheme):
        if not _LITTLE or scheme.store is QuantStore.NATIVE:
            return super().q_pack(q, scheme)
        bits, n = scheme.value.bits, scheme.num_quants
        shape = q.shape
        words = -(-shape[-1] // n)
        u = np.zeros(shape[:-1] + (words * n,), np.uint8)
        u[..., : shape[-1]] = np.asarray(q).astype(np.uint8) & ((1 << bits) - 1)
        if bits < 8:  # combine the 8 / bits values of each byte, lowest first
            per = 8 // bits
            u = u.reshape(shape[:-1] + (words * 4, per))
            b = np.zeros(u.shape[:-1], np.uint8)
            for i in range(per):
                b |= u[..., i] << (bits * i)
            u = b
        return np.ascontiguousarray(u).view(np.int32).reshape(shape[:-1] + (words,))

    def q_unpack(self, values, scheme, shape):
        if not _LITTLE or scheme.store is QuantStore.NATIVE:
            return super().q_unpack(values, scheme, shape)
        bits = scheme.value.bits
        b = np.ascontiguousarray(values).view(np.int8)
        if bits < 8:
            per = 8 // bits
            # field i of each byte moved to the top bits, then an arithmetic shift: sign extension
            cols = [(b << (8 - bits * (i + 1))).astype(np.int8) >> (8 - bits) for i in range(per)]
            b = np.stack(cols, -1).reshape(b.shape[:-1] + (b.shape[-1] * per,))
        return b[..., : shape[-1]].astype(np.int32)

    def q_matmul(self, x, y):
        lib = _native_quant.lib()
        if (
            lib is not None
            and type(x) is QuantizedPrimitive
            and type(y) is QuantizedPrimitive
            and self.float_dtype is DType.F32
            and len(x.shape) == 2
            and len(y.shape) == 2
            and all(p.scheme.value.bits == 8 and not p.scheme.level.is_block() for p in (x, y))
        ):
            scale = np.float32(np.asarray(x.scales).reshape(()) * np.asarray(y.scales).reshape(()))
            return _quant_dynamic.matmul_int8(self, x, y, float(scale))
        if (
            type(x) is not QuantizedPrimitive
            and type(y) is QuantizedPrimitive
            and len(x.shape) == 2
            and len(y.shape) == 2
        ):  # float @ quantized weight: the packed weight-only kernel
            return self.q_linear(x, y, None)
        return super().q_matmul(x, y)

    def q_conv2d(self, x, weight, bias, options):
        if self.quantize_activations:
            out = _quant_dynamic.conv2d(self, x, weight, bias, options)
            if out is not None:
                return out
        return super().q_conv2d(x, weight, bias, options)

    def qdq_conv2d(self, x, x_scale, x_zero_point, weight, weight_scales, bias, stride, pads,
                   dilation, groups, out_scale=None, out_zero_point=None):
        """conv2d of the 8-bit x (uint8/int8 primitive) dequantized by one scale and zero point
        with the 8-bit quantized weight, each output channel scaled by the weight's scale times
        `weight_scales` (one or [c_out]), plus bias: float32 (or, given `out_scale` and
        `out_zero_point`, quantized as ONNX's QuantizeLinear), or None where not covered
        (`_quant_static.conv2d`). pads: (top, left, bottom, right)."""
        arrays = (x, x_scale, weight.values, weight.scales) if type(weight) is QuantizedPrimitive else ()
        others = (x_zero_point, weight_scales, bias, out_scale, out_zero_point)
        if (
            self.float_dtype is not DType.F32
            or not arrays  # a decorator's wrapped values (Autodiff) are not numpy: not covered
            or not all(type(a) is np.ndarray for a in arrays)
            or not all(a is None or type(a) is np.ndarray for a in others)
        ):
            return None
        return _quant_static.conv2d(self, x, x_scale, x_zero_point, weight, weight_scales, bias,
                                    stride, pads, dilation, groups, out_scale, out_zero_point)  # fmt: skip

    def q_linear(self, x, weight, bias):
        if self.quantize_activations:
            out = _quant_dynamic.linear(self, x, weight, bias)
            if out is not None:
                return out
        lib = _native_quant.lib()
        s = weight.scheme
        if (
            lib is None
            or x.dtype != np.float32
            or len(weight.shape) != 2
            or (words := _as_words(weight)) is None
        ):
            return super().q_linear(x, weight, bias)
        k, n = weight.shape
        x2 = np.ascontiguousarray(x.reshape(-1, k), np.float32)
        scales = np.ascontiguousarray(weight.scales, np.float32)
        bits = 8 if s.store is QuantStore.NATIVE else s.value.bits
        block = s.level.block_size or 0
        out = np.empty((x2.shape[0], n), np.float32)
        lib.qlin_packed(
            x2.ctypes.data, words.ctypes.data, scales.ctypes.data, out.ctypes.data,
            x2.shape[0], k, n, words.shape[-1], bits, block,
            _quant_dynamic.threads(self, x2.shape[0] * k * n),
        )  # fmt: skip
        if bias is not None:
            out += self.q_dequantize(bias, DType.F32) if type(bias) is QuantizedPrimitive else bias
        return out.reshape(tuple(x.shape[:-1]) + (n,))
