"""Cuda's quantized ops: burn_gpu's shared kernels (`GpuQuantOps`), with the int8 x int8 matmul
of two per-tensor 8-bit matrices through cuBLAS where it is covered (`_quant_gemm.py`)."""

from __future__ import annotations

from burn_gpu import GpuQuantOps

from . import _quant_gemm


class CudaQuantOps(GpuQuantOps):
    """`q_matmul`: cuBLAS int8 GEMM + one scale kernel when `_quant_gemm` covers the operands,
    else burn_gpu's `qmm_i8` kernel (or the default: dequantize, float matmul)."""

    def q_matmul(self, x, y):
        out = _quant_gemm.q_matmul(self, x, y)
        return super().q_matmul(x, y) if out is None else out
