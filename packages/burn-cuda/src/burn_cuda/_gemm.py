"""float32/float64/float16/bfloat16 matmul as one direct cuBLAS call (`sgemm`/`dgemm`, and
`cublasGemmEx` for the half types; strided-batched for batches), instead of cupy's matmul.

Why: on the H100 host, cupy's matmul spent 29-43 us of host time per call on the guide model's
GEMM shapes where calling cuBLAS directly took 21-27 us, torch's `mm` 20-27 us
(`probe_launch.py`): its Python-level shape/stride handling and copies of transposed operands.
A training step of the guide issues 11 GEMMs. For the half types it was worse: cupy's matmul
took ~45 us of host time per bfloat16 GEMM on the H200 (issue 34's transformer step, 147 GEMMs),
and its batched matmul refused ml_dtypes' bfloat16 outright (the float32 detour: two
conversions in, one out). Half GEMMs here are `cublasGemmEx` / `cublasGemmStridedBatchedEx`
with half operands and output and float32 compute (`CUBLAS_COMPUTE_32F`, float32 alpha/beta:
float32 accumulation on tensor cores, the result rounded once), what cupy's matmul asks cuBLAS
for on float16.

Covered (everything else returns None and the caller uses cupy's matmul): float32 without TF32,
float64, float16 and bfloat16 (ml_dtypes' dtype), both operands of one dtype, rank 2, or rank >= 3 with equal batch dims (or one
side's batch all 1, read with stride 0), each operand's last two dims either row-major
(C-contiguous) or a transposed view of a row-major matrix (what `swap_dims` of the last two
dims gives, as in every linear layer's backward): cuBLAS reads those with its transpose flags,
without a copy. Results match cupy's matmul bitwise for the same cuBLAS algorithm and within
float rounding otherwise.

cuBLAS is column-major: a row-major `C[m, n] = A[m, k] B[k, n]` is computed as the
column-major `C^T = B^T A^T`, i.e. `gemm(opB, opA, n, m, k, B, A, C)`.
"""

from __future__ import annotations

import math
import os

import numpy as np

from . import _capture_blas
from ._dtypes import F16, HALF_DTYPES
from ._half_ops import empty as half_empty
from ._kernel_source import BIAS_BLOCK
from ._kernels import i64, kernel, launch_grid

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_ONE = {_F32: np.array(1.0, np.float32), _F64: np.array(1.0)}
_ZERO = {_F32: np.array(0.0, np.float32), _F64: np.array(0.0)}
#: host addresses of alpha = 1 and beta = 0 per dtype (`ndarray.ctypes` built a helper object
#: per access: ~3 us of every GEMM's host time for the two)
_SCALARS = {dt: (_ONE[dt].ctypes.data, _ZERO[dt].ctypes.data) for dt in _ONE}
#: cudaDataType of the half storage types: CUDA_R_16F = 2, CUDA_R_16BF = 14
CUDA_R_16F, CUDA_R_16BF = 2, 14
#: cublasComputeType_t CUBLAS_COMPUTE_32F (float32 accumulation; alpha/beta are float32)
COMPUTE_32F = 68
#: cublasGemmAlgo_t CUBLAS_GEMM_DEFAULT (cuBLAS picks; tensor cores for half types)
GEMM_DEFAULT = -1
#: half dtype -> its cudaDataType (bfloat16 when ml_dtypes is installed)
HALF_TYPES = {dt: CUDA_R_16F if dt is F16 else CUDA_R_16BF for dt in HALF_DTYPES}
for _dt in HALF_TYPES:  # half GEMMs take float32 alpha / beta (CUBLAS_COMPUTE_32F)
    _SCALARS[_dt] = _SCALARS[_F32]
_STATE: dict = {}
#: the direct calls are on unless the hot path (BURN_CUDA_FAST=0) or they alone
#: (BURN_CUDA_DIRECT_GEMM=0) are turned off
ENABLED = os.environ.get("BURN_CUDA_FAST", "1") != "0" and (
    os.environ.get("BURN_CUDA_DIRECT_GEMM", "1") != "0"
)


def _libs():
    """(cupy, its cuBLAS bindings, dtype -> (gemm, strided-batched gemm)), bound once."""
    s = _STATE.get("libs")
    if s is None:
        import cupy as cp
        from cupy_backends.cuda.libs import cublas

        s = _STATE["libs"] = bind(cp, cublas)
    return s


def _capture_fns(api) -> dict:
    """`bind`'s dtype -> (gemm, batched) table over `_capture_blas.Shim` `api`, built once."""
    fns = _STATE.get("capture")
    if fns is None:
        fns = _STATE["capture"] = bind(None, api)[2]
    return fns


def bind(cp, cublas) -> tuple:
    """The `_libs()` tuple of cupy module `cp` and cuBLAS bindings `cublas` (the CPU stand-in
    binds its own). Every entry takes sgemm's arguments: the half types' wrap `gemmEx` with
    their data type and float32 compute."""
    fns = {
        _F32: (cublas.sgemm, cublas.sgemmStridedBatched),
        _F64: (cublas.dgemm, cublas.dgemmStridedBatched),
    }
    for dt, ctype in HALF_TYPES.items():
        fns[dt] = _half_gemms(cublas, ctype)
    return cp, cublas, fns


def _half_gemms(cublas, ctype: int):
    """(gemm, strided-batched gemm) with sgemm's signatures over `cublasGemmEx` /
    `cublasGemmStridedBatchedEx` for storage type `ctype`: A, B and C of that type, float32
    compute and scalars."""
    ex, bex = cublas.gemmEx, cublas.gemmStridedBatchedEx

    def gemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
        ex(h, ta, tb, m, n, k, alpha, a, ctype, lda, b, ctype, ldb, beta, c, ctype, ldc,
           COMPUTE_32F, GEMM_DEFAULT)  # fmt: skip

    def batched(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, count):
        bex(h, ta, tb, m, n, k, alpha, a, ctype, lda, sa, b, ctype, ldb, sb, beta, c, ctype,
            ldc, sc, count, COMPUTE_32F, GEMM_DEFAULT)  # fmt: skip

    return gemm, batched


def _layout(a, rows: int, cols: int):
    """(transposed?, leading dim in elements, batch stride in elements) of `a`'s last two dims
    [rows, cols] as stored, or None when cuBLAS cannot read them in place."""
    isz = a.itemsize
    s = a.strides
    r, c = s[-2] // isz, s[-1] // isz
    if s[-2] % isz or s[-1] % isz:
        return None
    # row-major [rows, cols] (a dim of size 1 may have any stride)
    if (c == 1 or cols == 1) and (r == cols or rows == 1):
        ld = max(cols, 1)
        trans = False
    # transposed view of a row-major [cols, rows]
    elif (r == 1 or rows == 1) and (c == rows or cols == 1):
        ld = max(rows, 1)
        trans = True
    else:
        return None
    return trans, ld


def _batch_stride(a, batch_shape, mat_elems: int):
    """Element stride between the matrices of `a` when its leading dims are one contiguous run
    of `batch_shape` matrices (0 when they are all 1), else None."""
    lead = a.shape[:-2]
    if all(d == 1 for d in lead):
        return 0
    if tuple(lead) != tuple(batch_shape):
        return None
    isz = a.itemsize
    expect = mat_elems * isz
    for d, st in zip(reversed(lead), reversed(a.strides[:-2])):
        if d != 1 and st != expect:
            return None
        expect *= d
    return mat_elems


def matmul(x, y):
    """`x @ y` through cuBLAS directly, or None when not covered (see the module docstring).

    Shapes: `x [..., m, k]`, `y [..., k, n]` -> `[..., m, n]`.
    """
    dt = x.dtype
    if dt not in _SCALARS or y.dtype != dt or x.ndim < 2 or x.ndim != y.ndim:
        return None
    m, k = x.shape[-2], x.shape[-1]
    n = y.shape[-1]
    if y.shape[-2] != k or m == 0 or n == 0 or k == 0 or max(m, n, k) >= 2**31:
        return None
    la = _layout(x, m, k)
    lb = _layout(y, k, n)
    if la is None or lb is None:
        return None
    cp, cublas, fns = _libs()
    if x.ndim == 2:
        batch_shape: tuple = ()
        count = 1
    else:
        bx, by = x.shape[:-2], y.shape[:-2]
        if all(d == 1 for d in bx):
            batch_shape = by
        elif all(d == 1 for d in by) or bx == by:
            batch_shape = bx
        else:
            return None  # a partial broadcast: cupy's matmul handles it
        count = math.prod(batch_shape)  # np.prod took ~3 us per call
        if count == 0 or count >= 2**31:
            return None
    sx = _batch_stride(x, batch_shape, m * k) if count > 1 else 0
    sy = _batch_stride(y, batch_shape, k * n) if count > 1 else 0
    if sx is None or sy is None:
        return None
    shape = batch_shape + (m, n)
    # (a bfloat16 output as `_half_ops.empty` allocates one: cupy's constructor may not take
    # ml_dtypes' dtype)
    out = cp.ndarray(shape, dt) if dt.itemsize != 2 else half_empty(shape, dt)
    # cupy's handle and wrappers, or (a step recording) the capture's binding and ctypes calls
    handle, api = _capture_blas.handle_and_api(cp, cublas)
    (ta, lda), (tb, ldb) = la, lb
    one, zero = _SCALARS[dt]
    gemm, batched = (fns if api is cublas else _capture_fns(api))[dt]
    # column-major C^T[n, m] = op(B)^T-side first: gemm(opB, opA, n, m, k, B, ldb, A, lda, C, n)
    if count == 1:
        gemm(handle, int(tb), int(ta), n, m, k, one, y.data.ptr, ldb, x.data.ptr, lda, zero,
             out.data.ptr, n)  # fmt: skip
    else:
        batched(handle, int(tb), int(ta), n, m, k, one, y.data.ptr, ldb, sy, x.data.ptr, lda, sx,
                zero, out.data.ptr, n, m * n, count)  # fmt: skip
    return out


def matmul_dense(x, y):
    """`x @ y` for float32/float64 operands `matmul` does not cover (a partial batch broadcast,
    strides cuBLAS cannot read): both copied to contiguous arrays of the broadcast batch shape
    first, then the direct call. What a captured step uses instead of cupy's matmul, which
    cupy refuses while a stream captures. None when the direct call still does not apply."""
    if x.ndim < 2 or y.ndim < 2 or x.dtype not in _ONE or y.dtype != x.dtype:
        return None
    cp = _libs()[0]
    batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    xs = cp.ascontiguousarray(cp.broadcast_to(x, batch + x.shape[-2:]))
    ys = cp.ascontiguousarray(cp.broadcast_to(y, batch + y.shape[-2:]))
    return matmul(xs, ys)


_ONES: dict = {}


#: column sums of at most this many elements take the `sum_keep_mid` kernel (one bare launch,
#: ~6 us of host time); larger ones one GEMM (~15-20 us of host time in cuBLAS, but coalesced
#: reads: the kernel's block per column reads a column with the row stride)
SMALL_SUM = 1 << 18


def sum_rows(a):
    """The column sums of a contiguous 2-D float32/float64 `a` [rows, cols] -> [cols] (a bias
    gradient, a conv weight gradient's sum over the batch): burn_gpu's `sum_keep_mid` (float64
    accumulation) for small `a`, else one GEMM `ones[1, rows] @ a` (float32 accumulation in
    cuBLAS). None when neither covers it (the caller takes its default).

    Example:
        >>> sum_rows(cp.ones((64, 10), np.float32))   # doctest: +SKIP
        array([64., 64., ...], dtype=float32)
    """
    rows, cols = a.shape
    cp = _libs()[0]
    if a.size <= SMALL_SUM and rows:
        out = cp.ndarray((cols,), a.dtype)
        k = kernel("sum_keep_mid", a.dtype)
        launch_grid(k, cols, BIAS_BLOCK, out, a, i64(0), i64(rows), i64(cols), i64(1))
        return out
    key = (rows, a.dtype, cp.cuda.runtime.getDevice())
    ones = _ONES.get(key)
    if ones is None and _capture_blas.active():
        # made while a step records: memory of the capture's private pool, freed with its
        # tape, so not cached for later calls
        ones = cp.ones((1, rows), a.dtype)
    elif ones is None:  # one ones-vector per (rows, dtype, GPU); bounded for varying sizes
        if len(_ONES) >= 64:
            _ONES.clear()
        ones = _ONES[key] = cp.ones((1, rows), a.dtype)
    out = matmul(ones, a)
    return None if out is None else out.reshape(cols)
