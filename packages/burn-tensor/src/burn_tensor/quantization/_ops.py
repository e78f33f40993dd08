"""Quantization backend ops with default implementations (Burn's `QTensorOps`).

Every default is written with the backend's own float/int/bitwise ops on primitives, so every
backend and decorator (NdArray, OpenCl, Cuda, Autodiff, Fusion) runs them unchanged; a backend
overrides the ones it can do faster (burn_ndarray packs with numpy views).

Arithmetic (Burn's symmetric quantization, `quantization/strategy.rs`):
    scale = 2 * max(|min|, |max|) / (b - a)        (MinMax calibration, per tensor or block)
    q     = clamp(round(x / scale), a, b)          round: half AWAY from zero (Rust's `round`)
    x'    = scale * q
with `(a, b) = scheme.value.range()`. A scale of 0 (an all-zero tensor or block) is raised to
the smallest normal float so zeros quantize to 0 instead of NaN (a choice of ours).
"""

from __future__ import annotations

import math

import numpy as np

from .._data import TensorData
from .._dtype import DType
from ._primitive import QuantizedPrimitive, is_quantized_primitive
from ._scheme import QuantScheme, QuantStore


def check_scheme_fits(op: str, shape: tuple, scheme: QuantScheme) -> None:
    """Raise ValueError when `scheme` cannot quantize a tensor of `shape` (named by `op`)."""
    from .._errors import TensorCheckError

    if len(shape) == 0:
        raise TensorCheckError(op, "cannot quantize a rank-0 tensor")
    if scheme.level.is_block():
        bs = scheme.level.block_size
        if shape[-1] % bs:
            raise TensorCheckError(
                op,
                f"block size {bs} does not divide the last dim of shape {list(shape)} "
                "(per-block quantization runs along the last dim)",
            )


def smallest_normal(dtype) -> float:
    """The dtype's smallest normal number (bfloat16: float32's, the same exponent range)."""
    try:
        return float(np.finfo(dtype).tiny)
    except ValueError:  # ml_dtypes' bfloat16 is not a numpy inexact type
        return float(np.finfo(np.float32).tiny)


class QuantOps:
    """Default quantization ops of `Backend` (see the module docstring for the arithmetic)."""

    # -- helpers ---------------------------------------------------------------------------------
    def _q_blocks(self, x, shape, scheme):
        """x viewed as [..., nblocks, block] (block level) or unchanged (tensor level)."""
        if not scheme.level.is_block():
            return x
        bs = scheme.level.block_size
        return self.float_reshape(x, tuple(shape[:-1]) + (shape[-1] // bs, bs))

    def _q_scales_for(self, scales, shape, scheme, dtype):
        """Scales cast to `dtype`, shaped to broadcast against `_q_blocks`."""
        s = self.float_cast(scales, dtype) if DType.from_np(scales.dtype) is not dtype else scales
        if scheme.level.is_block():
            return self.float_reshape(s, tuple(shape[:-1]) + (shape[-1] // scheme.level.block_size, 1))
        return self.float_reshape(s, (1,) * len(shape))

    # -- calibration -------------------------------------------------------------------------------
    def q_compute_scales(self, x, scheme: QuantScheme):
        """MinMax scales of float primitive `x` for `scheme`: shape `scheme.params_shape`."""
        shape = tuple(x.shape)
        a, b = scheme.value.range()
        if scheme.level.is_block():
            xb = self._q_blocks(x, shape, scheme)
            last = len(shape)  # the block dim of [..., nblocks, block]
            amax = self.float_max_dim(self.float_abs(xb), last)
            amax = self.float_reshape(amax, scheme.params_shape(shape))
        else:
            amax = self.float_max(self.float_abs(self.float_reshape(x, (math.prod(shape),))))
        scale = self.float_div_scalar(self.float_mul_scalar(amax, 2.0), float(b - a))
        tiny = smallest_normal(x.dtype)
        scale = self.float_clamp_min(scale, tiny)
        return self.float_cast(scale, scheme.param.dtype) if scheme.param.dtype.np != x.dtype else scale

    # -- quantize / dequantize ---------------------------------------------------------------------
    def q_quantize(self, x, scheme: QuantScheme, scales) -> QuantizedPrimitive:
        """Quantize float primitive `x` with the given scales (shape `scheme.params_shape`)."""
        shape = tuple(x.shape)
        check_scheme_fits("quantize", shape, scheme)
        dtype = DType.from_np(x.dtype)
        a, b = scheme.value.range()
        y = self.float_div(self._q_blocks(x, shape, scheme), self._q_scales_for(scales, shape, scheme, dtype))
        # Round half away from zero, exactly: |y| - floor(|y|) is exact in binary floats.
        ay = self.float_abs(y)
        fl = self.float_floor(ay)
        up = self.bool_into_float(self.float_greater_equal_elem(self.float_sub(ay, fl), 0.5), dtype)
        r = self.float_add(fl, up)
        r = self.float_mask_where(r, self.float_lower_elem(y, 0.0), self.float_neg(r))
        r = self.float_clamp(r, float(a), float(b))
        q = self.float_into_int(self.float_reshape(r, shape), DType.I32)
        stored = self.float_cast(scales, scheme.param.dtype) if DType.from_np(scales.dtype) is not scheme.param.dtype else scales
        return QuantizedPrimitive(self.q_pack(q, scheme), stored, scheme, shape)

    def q_quantize_dynamic(self, x, scheme: QuantScheme) -> QuantizedPrimitive:
        """Quantize with MinMax scales computed from `x` itself (Burn's `quantize_dynamic`)."""
        check_scheme_fits("quantize_dynamic", tuple(x.shape), scheme)
        return self.q_quantize(x, scheme, self.q_compute_scales(x, scheme))

    def q_dequantize(self, qx: QuantizedPrimitive, dtype: DType | None = None):
        """Float primitive (`dtype`, default the backend's float dtype) = scale * q."""
        dtype = dtype or self.float_dtype
        shape, scheme = qx.shape, qx.scheme
        q = self.int_into_float(self.q_unpack(qx.values, scheme, shape), dtype)
        y = self.float_mul(self._q_blocks(q, shape, scheme), self._q_scales_for(qx.scales, shape, scheme, dtype))
        return self.float_reshape(y, shape)

    # -- packing -------------------------------------------------------------------------------------
    def q_pack(self, q, scheme: QuantScheme):
        """Int primitive of values in range -> stored values (see `QuantizedPrimitive`)."""
        if scheme.store is QuantStore.NATIVE:
            return self.int_cast(q, DType.I8)
        shape = tuple(q.shape)
        n, bits = scheme.num_quants, scheme.value.bits
        last = shape[-1]
        words = -(-last // n)
        q = self.int_cast(q, DType.I32) if DType.from_np(q.dtype) is not DType.I32 else q
        if words * n != last:
            pad = TensorData(np.zeros(shape[:-1] + (words * n - last,), np.int32))
            q = self.int_cat([q, self.int_from_data(pad, self.device_of(q))], len(shape) - 1)
        q = self.int_reshape(q, shape[:-1] + (words, n))
        out = None
        mask = (1 << bits) - 1
        for i in range(n):
            sl = tuple(slice(0, d, 1) for d in shape[:-1]) + (slice(0, words, 1), slice(i, i + 1, 1))
            col = self.int_slice(q, sl)
            part = self.bitwise_left_shift_scalar(self.bitwise_and_scalar(col, mask), bits * i)
            out = part if out is None else self.bitwise_or(out, part)
        return self.int_reshape(out, shape[:-1] + (words,))

    def q_unpack(self, values, scheme: QuantScheme, shape: tuple):
        """Stored values -> int32 primitive of `shape` (sign-extended)."""
        if scheme.store is QuantStore.NATIVE:
            return self.int_cast(values, DType.I32)
        n, bits = scheme.num_quants, scheme.value.bits
        words = values.shape[-1]
        cols = []
        for i in range(n):
            # Move field i to the top bits, then shift right arithmetically: sign extension.
            c = self.bitwise_left_shift_scalar(values, 32 - bits * (i + 1))
            c = self.bitwise_right_shift_scalar(c, 32 - bits)
            cols.append(self.int_reshape(c, tuple(shape[:-1]) + (words, 1)))
        q = self.int_reshape(self.int_cat(cols, len(shape)), tuple(shape[:-1]) + (words * n,))
        if words * n != shape[-1]:
            q = self.int_slice(q, tuple(slice(0, d, 1) for d in shape))
        return q

    # -- host transfer -----------------------------------------------------------------------------
    def q_into_data(self, qx: QuantizedPrimitive):
        """`QuantizedData` (host arrays of the stored values and scales)."""
        from ._data import QuantizedData

        return QuantizedData(
            self.int_into_data(qx.values).array, self.float_into_data(qx.scales).array, qx.scheme, qx.shape
        )

    def q_from_data(self, data, device) -> QuantizedPrimitive:
        """A `QuantizedData` onto `device`."""
        v = self.int_from_data(TensorData(data.values), device)
        s = self.float_from_data(TensorData(data.scales), device)
        return QuantizedPrimitive(v, s, data.scheme, data.shape)

    def q_to_device(self, qx: QuantizedPrimitive, device) -> QuantizedPrimitive:
        """The stored values and scales moved to `device` (same backend); the scheme is kept."""
        return QuantizedPrimitive(
            self.int_to_device(qx.values, device), self.float_to_device(qx.scales, device), qx.scheme, qx.shape
        )

    # -- quantized kernels (defaults dequantize) ---------------------------------------------------
    def q_linear(self, x, weight: QuantizedPrimitive, bias):
        """Weight-only linear: x [.., d_in] float, weight quantized [d_in, d_out]."""
        return self.linear(x, self.q_dequantize(weight, DType.from_np(x.dtype)), bias)

    def q_conv2d(self, x, weight: QuantizedPrimitive, bias, options):
        """conv2d with a quantized weight [c_out, c_in/groups, kh, kw]; x and bias float.
        Default: weight-only (dequantize the weight, then the float conv2d)."""
        return self.conv2d(x, self.q_dequantize(weight, DType.from_np(x.dtype)), bias, options)

    def q_matmul(self, x, y):
        """Matmul where either operand may be quantized; default: dequantize, float matmul."""
        dt = None
        for p in (x, y):
            if not is_quantized_primitive(p):
                dt = DType.from_np(p.dtype)
        x = self.q_dequantize(x, dt) if is_quantized_primitive(x) else x
        y = self.q_dequantize(y, dt) if is_quantized_primitive(y) else y
        return self.float_matmul(x, y)
