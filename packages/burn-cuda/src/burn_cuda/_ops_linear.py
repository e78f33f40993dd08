"""`linear` and its three backward primitives as direct cuBLAS calls (float32 without TF32 and
float64), and the in-place bias kernel shared with conv2d. A forward with a bias is one
cuBLASLt call with the bias in its epilogue where `_gemm_lt` covers it (float32, half types).

Why: burn_tensor's defaults compose each of them from 2-4 backend ops (reshape, swap_dims,
matmul, a broadcast add or sum_dim), each a trip through the op table; on the guide model's
training step (2 linear layers) those layers of Python were 26-48 us of host time per call on
the H100 host where the GEMM itself is one cuBLAS call. Here: the forward is one GEMM and one
bias kernel, the input and weight gradients one GEMM each reading the transposed operand in
place (cuBLAS's transpose flags), the bias gradient one column-sum kernel (one GEMM against a
ones vector for large gradients, `_gemm.sum_rows`). float16 / bfloat16 take the same GEMMs
(`cublasGemmEx`, float32 accumulation), their bias added by the half broadcast-add kernel and
summed by the half column reduction (`_half_ops`; float32 accumulation, one rounding): on the
H200 the bf16 defaults cost 3-5 table ops per call. Anything else (TF32, empty operands,
layouts cuBLAS cannot read) takes the defaults, which run the same cuBLAS calls through
`float_matmul` or cupy.

The results equal the defaults' bit for bit except the bias gradient, whose column sums are
accumulated in float64 (or by cuBLAS for large gradients) instead of the column-reduction
kernel's float32 order.
"""

from __future__ import annotations

import math

import numpy as np
from burn_tensor import DType

from . import _gemm, _gemm_lt
from ._dtypes import HALF_DTYPES, KERNEL_FLOATS
from ._half_ops import contiguous, run_elementwise
from ._half_reduce import reduce_dim
from ._kernels import i64, kernel, launch

_FLOATS = KERNEL_FLOATS
_F32 = np.dtype(np.float32)
LT = _gemm_lt.ENABLED


def direct(backend, *arrays) -> bool:
    """Whether the direct cuBLAS paths apply: every array float32 (TF32 off), every one
    float64, or every one of one half type (linear only: the convolutions' kernels have no half
    storage), with the direct GEMM enabled (BURN_CUDA_DIRECT_GEMM / BURN_CUDA_FAST)."""
    dt = arrays[0].dtype
    if not _gemm.ENABLED or dt not in _FLOATS or (backend.allow_tf32 and dt == _FLOATS[0]):
        return False
    return _same_dtype(arrays, dt)


def _direct_linear(backend, *arrays) -> bool:
    """`direct`, or every array of one half type (float16 / bfloat16)."""
    if arrays[0].dtype in HALF_DTYPES:
        return _gemm.ENABLED and _same_dtype(arrays, arrays[0].dtype)
    return direct(backend, *arrays)


def _same_dtype(arrays, dt) -> bool:
    # a loop, not `all(<genexpr>)`: a generator frame per array, three linear ops per layer
    for a in arrays:
        if a.dtype != dt:
            return False
    return True


def add_bias(out, bias, channels: int, inner: int) -> bool:
    """In place: out [outer, channels, inner] (C-contiguous, fresh) += bias [channels] broadcast;
    False (nothing done) when the bias is not a contiguous array of out's dtype."""
    if bias.dtype != out.dtype or not bias._c_contiguous or bias.size != channels:
        return False
    total = out.size
    index = "int" if total < 2**31 else "long long"
    launch(kernel("bias_add", out.dtype, index=index), total, out, bias, i64(total),
           i64(channels), i64(inner))  # fmt: skip
    return True


def _rows(x, d: int):
    """x [..., d] as a 2-D [m, d] (a view when x is contiguous; a strided half array is copied
    as its 16-bit patterns first: cupy's copy kernels may not take ml_dtypes' bfloat16)."""
    if x.ndim == 2:
        return x
    if not x._c_contiguous and x.dtype in HALF_DTYPES:
        x = contiguous(x)
    return x.reshape(math.prod(x.shape[:-1]), d)


class CudaLinearOps:
    """Mixin of `Cuda`: linear layers as direct GEMMs (see the module docstring)."""

    def linear(self, x, weight, bias):
        if not (_direct_linear(self, x, weight) and (bias is None or bias.dtype == x.dtype)):
            return super().linear(x, weight, bias)
        d_in, d_out = weight.shape
        rows = _rows(x, d_in)
        # the bias in cuBLASLt's epilogue: one kernel, not a GEMM and a bias kernel
        out = _gemm_lt.linear_bias(rows, weight, bias) if bias is not None and LT else None
        if out is not None:
            return out if x.ndim == 2 else out.reshape(x.shape[:-1] + (d_out,))
        out = _gemm.matmul(rows, weight)
        if out is None:
            return super().linear(x, weight, bias)
        if bias is not None:
            if out.dtype in HALF_DTYPES:
                out = _half_bias(out, bias, d_out)
                if out is None:
                    return super().linear(x, weight, bias)
            elif not add_bias(out, bias, d_out, 1):
                out += bias.reshape(1, d_out)
        return out if x.ndim == 2 else out.reshape(x.shape[:-1] + (d_out,))

    def linear_x_backward(self, weight, output_grad):
        g = output_grad
        if _direct_linear(self, weight, g):
            d_in, d_out = weight.shape
            dx = _gemm.matmul(_rows(g, d_out), weight.T)
            if dx is not None:
                return dx if g.ndim == 2 else dx.reshape(g.shape[:-1] + (d_in,))
        return super().linear_x_backward(weight, output_grad)

    def linear_weight_backward(self, x, output_grad):
        g = output_grad
        if _direct_linear(self, x, g):
            dw = _gemm.matmul(_rows(x, x.shape[-1]).T, _rows(g, g.shape[-1]))
            if dw is not None:
                return dw
        return super().linear_weight_backward(x, output_grad)

    def linear_weight_bias_backward(self, x, output_grad):
        g = output_grad
        if LT and _direct_linear(self, x, g):
            got = _gemm_lt.weight_bias_grad(_rows(x, x.shape[-1]), _rows(g, g.shape[-1]))
            if got is not None:
                return got
        return self.linear_weight_backward(x, g), self.linear_bias_backward(g)

    def linear_bias_backward(self, output_grad):
        g = output_grad
        if _direct_linear(self, g):
            rows = _rows(g, g.shape[-1])
            if rows._c_contiguous:
                if rows.dtype in HALF_DTYPES:
                    db = reduce_dim("sum", rows, 0)  # float32 sums, one rounding
                    db = None if db is None else db.reshape(rows.shape[1])
                else:
                    db = _gemm.sum_rows(rows)
                if db is not None:
                    return db
        return super().linear_bias_backward(output_grad)


def _wide_args(x, weight, bias, h) -> bool:
    """Whether `linear_half` runs as `_gemm_lt.linear_wide`: float32 input (float32 or `h`
    weight), a float32 bias or none, half dtype `h`, cuBLASLt on."""
    return (
        LT
        and h in HALF_DTYPES
        and x.dtype == _F32
        and (weight.dtype == _F32 or weight.dtype == h)
        and (bias is None or bias.dtype == _F32)
    )


class CudaLinearHalfOps:
    """Mixin of `Cuda`: autocast's linear (`linear_half`) as one cuBLASLt GEMM of the half
    copies writing float32 with the bias in its epilogue, and its gradients as two GEMMs writing
    float32 (the bias gradient in the weight GEMM's epilogue, summed from the half output
    gradient as torch's autocast addmm). The default is 4 ops forward and up to 6 backward:
    a cast each, the half linear, the widening cast, the bias add; the gradient's cast, two
    GEMMs, their casts and the bias sums."""

    def linear_half(self, x, weight, bias, dtype):
        h = dtype.np
        if _wide_args(x, weight, bias, h):
            xh = x if x.dtype == h else self.float_cast(x, dtype)
            wh = weight if weight.dtype == h else self.float_cast(weight, dtype)
            d_in, d_out = weight.shape
            out = _gemm_lt.linear_wide(_rows(xh, d_in), wh, bias)
            if out is not None:
                return (out if x.ndim == 2 else out.reshape(x.shape[:-1] + (d_out,))), xh, wh
        return super().linear_half(x, weight, bias, dtype)

    def linear_half_backward(self, x_half, weight_half, output_grad, dtypes):
        x_dt, w_dt, b_dt = dtypes
        h, g = x_half.dtype, output_grad
        wide = (x_dt is None or x_dt is DType.F32) and (w_dt is None or w_dt is DType.F32)
        if (
            LT
            and wide
            and h in HALF_DTYPES
            and weight_half.dtype == h
            and g.dtype == _F32
            and (b_dt is None or b_dt is DType.F32)
            and (w_dt is not None or b_dt is None)  # a bias alone: the default's sums
        ):
            d_in, d_out = weight_half.shape
            gh = _rows(self.float_cast(g, DType.from_np(h)), d_out)
            want = (w_dt is not None, b_dt is not None)
            got = _gemm_lt.grads_wide(_rows(x_half, d_in), weight_half, gh, x_dt is not None, want)
            if got is not None:
                dx, dw, db = got
                if dx is not None and g.ndim != 2:
                    dx = dx.reshape(g.shape[:-1] + (d_in,))
                return dx, dw, db
        return super().linear_half_backward(x_half, weight_half, output_grad, dtypes)


def _half_bias(out, bias, d_out: int):
    """out [m, d_out] + bias [d_out] of a half type: the half broadcast-add kernel (float32
    sum, one rounding); None when it does not cover the operands."""
    return run_elementwise("float_add", [out, bias.reshape(1, d_out)], (), out.dtype)
