"""int8 x int8 -> int32 matmul of two 8-bit per-tensor quantized matrices through cuBLAS
(`cublasGemmEx`: CUDA_R_8I inputs, CUDA_R_32I output, CUBLAS_COMPUTE_32I), then the two scales
in one elementwise kernel (issue 39 item 3).

Layout: 8-bit values packed little-endian in u32 words *are* the int8 matrix [rows, 4 * words]
in memory (value i of a word is its byte i), so A = x's values is read in place (row-major, K
contiguous, leading dim = its row stride in bytes). cuBLAS's int8 tensor-core kernels want the
"TN" form, both operands K-contiguous: B [K, N] is packed along N, so it is transposed once into
a fresh int8 [N, K] (`i8_transpose`, a 32x32 tile through shared memory: coalesced reads and
writes). Row-major C[m, n] = A B is the column-major C^T = B^T A^T:
`gemmEx(OP_T, OP_N, n, m, k, Bt, ldb=K, A, lda, C, ldc=n)`.

Covered (else `q_matmul` returns None and the caller takes burn_gpu's `qmm_i8` kernel): both
operands 8-bit (Q8S/Q8F), per tensor (a per-block scale varies along K, so it cannot leave the
int32 sum), rank 2, float32 scales, a float32 backend, packed u32 or native int8 storage with
contiguous rows, M, N and K multiples of 4 and below 2^31 (cuBLAS's int8 rules: leading dims
multiples of 4, 4-byte aligned pointers). A cuBLAS error (an unsupported shape on some GPU)
falls back too, and that shape is remembered.

The result is float32 `acc * (scale_x * scale_y)` (the scale product rounded to float32 first,
as `qmm_i8` and the NdArray kernel do): bitwise what the fallback gives. It is written over the
int32 accumulator's memory (`i32_scale`: each thread reads then writes its own element).
"""

from __future__ import annotations

import os

import numpy as np

from . import _capture_blas, _gemm

# cuBLAS / CUDA library enum values (cublas_api.h, library_types.h)
_OP_N, _OP_T = 0, 1
_CUDA_R_8I, _CUDA_R_32I = 3, 10
_COMPUTE_32I = 72
_GEMM_DEFAULT = -1
_ONE = np.array(1, np.int32)
_ZERO = np.array(0, np.int32)
#: BURN_CUDA_INT8_GEMM=0 turns the cuBLAS path off (the qmm_i8 kernel then runs)
ENABLED = os.environ.get("BURN_CUDA_INT8_GEMM", "1") != "0"
#: (m, n, k) shapes cuBLAS refused in this process: they take the kernel
_REFUSED: set = set()
#: how many q_matmuls took cuBLAS (the GPU test checks the path was taken)
CALLS = [0]

TILE = 32
GROUP = 256  # a 32 x 8 block: each thread moves 4 bytes of a 32 x 32 tile

SOURCE = r"""
extern "C" __global__ void i8_transpose(signed char* out, const signed char* in, const long long rows,
                                        const long long cols, const long long ld_in,
                                        const long long ld_out, const long long tiles_c) {
  // out[c * ld_out + r] = in[r * ld_in + c], one 32 x 32 tile a block
  __shared__ signed char tile[32][33];
  const long long t = blockIdx.x;
  const long long r0 = (t / tiles_c) * 32, c0 = (t % tiles_c) * 32;
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  for (int i = ty; i < 32; i += 8) {
    const long long r = r0 + i, c = c0 + tx;
    tile[i][tx] = (r < rows && c < cols) ? in[r * ld_in + c] : (signed char)0;
  }
  __syncthreads();
  for (int i = ty; i < 32; i += 8) {
    const long long c = c0 + i, r = r0 + tx;
    if (c < cols && r < rows) out[c * ld_out + r] = tile[tx][i];
  }
}

extern "C" __global__ void i32_scale(float* out, const int* acc, const float* sa, const float* sb,
                                     const long long n) {
  // out may be acc's own memory: each thread reads its element before writing it
  const float s = sa[0] * sb[0];
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)blockDim.x * gridDim.x) {
    out[i] = (float)acc[i] * s;
  }
}
"""


def _rows(p):
    """(the int8 matrix's row stride in bytes, columns it holds) of an 8-bit quantized
    primitive's values, or None when its rows are not contiguous bytes."""
    v = p.values
    if v.ndim != 2 or v.strides[1] != v.itemsize or v.strides[0] % 4 or v.data.ptr % 4:
        return None
    return v.strides[0], v.shape[1] * v.itemsize


def eligible(backend, x, y) -> bool:
    """Whether `q_matmul(x, y)` can take cuBLAS (see the module docstring)."""
    from burn_tensor import DType
    from burn_tensor.quantization import QuantizedPrimitive, QuantStore

    for p in (x, y):
        if (
            type(p) is not QuantizedPrimitive
            or len(p.shape) != 2
            or p.scheme.value.bits != 8
            or p.scheme.level.is_block()
            or p.scheme.store not in (QuantStore.PACKED_U32, QuantStore.NATIVE)
            or np.dtype(p.scales.dtype) != np.float32
            or p.scales.size != 1
        ):
            return False
    m, k = x.shape
    k2, n = y.shape
    return (
        backend.float_dtype is DType.F32
        and k == k2
        and m % 4 == 0
        and n % 4 == 0
        and k % 4 == 0
        and 0 < max(m, n, k) < 2**31
        and min(m, n, k) > 0
    )


def transpose_i8(rt, src, rows: int, cols: int, ld_in: int):
    """int8 [cols, rows] (C-contiguous, a fresh array) = the transpose of the int8 matrix
    [rows, cols] at `src` (any device array; its bytes read with row stride `ld_in`)."""
    out = rt.empty((cols, rows), np.dtype(np.int8))
    tiles_c = -(-cols // TILE)
    tiles = -(-rows // TILE) * tiles_c
    k = rt.kernel(("quant_gemm",), "i8_transpose", lambda: SOURCE)
    args = [out, src, *((v, "int64") for v in (rows, cols, ld_in, rows, tiles_c))]
    rt.call(k, tiles * GROUP, args, group=GROUP)
    return out


def scale_into_float(rt, acc, sa, sb):
    """float32 `acc * (sa[0] * sb[0])` written over int32 `acc`'s memory (returned as float32)."""
    out = acc.view(np.float32)
    k = rt.kernel(("quant_gemm",), "i32_scale", lambda: SOURCE)
    rt.call(k, acc.size, [out, acc, sa, sb, (acc.size, "int64")])
    return out


def q_matmul(backend, x, y):
    """x @ y (float32 [m, n]) through cuBLAS int8, or None when not covered."""
    if not (ENABLED and _gemm.ENABLED) or not eligible(backend, x, y):
        return None
    m, k = x.shape
    n = y.shape[1]
    if (m, n, k) in _REFUSED:
        return None
    la, lb = _rows(x), _rows(y)
    if la is None or lb is None or la[1] < k or lb[1] < n:
        return None
    cp, cublas, _ = _gemm._libs()
    rt = backend.kernels_of(x.values)
    bt = transpose_i8(rt, y.values, k, n, lb[0])
    acc = rt.empty((m, n), np.dtype(np.int32))
    handle, cublas = _capture_blas.handle_and_api(cp, cublas)
    try:
        cublas.gemmEx(
            handle, _OP_T, _OP_N, n, m, k, _ONE.ctypes.data,
            bt.data.ptr, _CUDA_R_8I, k, x.values.data.ptr, _CUDA_R_8I, la[0], _ZERO.ctypes.data,
            acc.data.ptr, _CUDA_R_32I, n, _COMPUTE_32I, _GEMM_DEFAULT,
        )  # fmt: skip
    except cublas.CUBLASError:
        _REFUSED.add((m, n, k))
        return None
    CALLS[0] += 1
    return scale_into_float(rt, acc, x.scales, y.scales)
