"""A stand-in for cupy's cuBLAS bindings (`cupy_backends.cuda.libs.cublas`) on numpy, for the
CPU stand-in (`fake_cupy.py`): the GEMMs `_gemm.py` calls -- `sgemm`, `dgemm`, `gemmEx` and
their strided-batched forms -- with cuBLAS's column-major semantics, reading and writing the
stand-in's memory through the raw addresses the caller passes (so a wrong leading dimension,
transpose flag or batch stride gives a wrong result here as on the GPU).

Half types (`gemmEx` with CUDA_R_16F / CUDA_R_16BF) are widened to float32, multiplied in float32
and the result rounded once to the storage type (round to nearest even), what cuBLAS's
CUBLAS_COMPUTE_32F does up to the order of the float32 sums. `calls` records (name, m, n, k,
batch) per call; `FakeCublas(execute=False)` only records (host timing on the stand-in).
"""

from __future__ import annotations

import ctypes

import numpy as np

#: cudaDataType -> numpy dtype of the storage (bfloat16: ml_dtypes', imported on use)
_CUDA_TYPES = {0: np.dtype(np.float32), 1: np.dtype(np.float64), 2: np.dtype(np.float16)}
_R_16BF = 14
COMPUTE_32F = 68


class CUBLASError(RuntimeError):
    """A call cuBLAS would refuse (an unknown type, a leading dimension too small)."""


def _dtype(ctype: int) -> np.dtype:
    if ctype == _R_16BF:
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    try:
        return _CUDA_TYPES[ctype]
    except KeyError:
        raise CUBLASError(f"fake cuBLAS: unsupported cudaDataType {ctype}") from None


def _view(ptr: int, dtype: np.dtype, rows: int, cols: int, ld: int, stride: int, count: int):
    """The column-major [count, rows, cols] matrices at `ptr` (element (i, j) of matrix b at
    ptr + (b * stride + i + j * ld) * itemsize) as a strided numpy view."""
    if ld < max(1, rows):
        raise CUBLASError(f"fake cuBLAS: leading dimension {ld} < rows {rows}")
    isz = dtype.itemsize
    span = ((count - 1) * stride + (cols - 1) * ld + rows) * isz
    buf = (ctypes.c_char * span).from_address(ptr)
    flat = np.frombuffer(buf, np.uint8)
    return np.lib.stride_tricks.as_strided(
        flat.view(dtype), (count, rows, cols), (stride * isz, isz, ld * isz), writeable=True
    )


def _op(ptr, dtype, trans, rows, cols, ld, stride, count):
    """op(X) as [count, rows, cols] float array: X itself (stored rows x cols) or, with
    `trans`, the transpose of X stored cols x rows."""
    if trans:
        v = _view(ptr, dtype, cols, rows, ld, stride, count).swapaxes(1, 2)
    else:
        v = _view(ptr, dtype, rows, cols, ld, stride, count)
    wide = np.float64 if dtype == np.float64 else np.float32
    return v.astype(wide)


def _read_scalar(addr: int, wide) -> float:
    c = ctypes.c_double if wide == np.float64 else ctypes.c_float
    return c.from_address(addr).value


class FakeCublas:
    """The binding functions `_gemm.py` uses (cupy's names and argument orders)."""

    CUBLASError = CUBLASError

    def __init__(self, execute: bool = True):
        self.calls: list = []
        self.execute = execute

    def setStream(self, handle, stream) -> None:
        return None

    def _run(self, name, ta, tb, m, n, k, alpha, a, atype, lda, sa, b, btype, ldb, sb,
             beta, c, ctype, ldc, sc, count, compute_wide):  # fmt: skip
        self.calls.append((name, m, n, k, count))
        if not self.execute:
            return
        at, bt, ct = _dtype(atype), _dtype(btype), _dtype(ctype)
        opa = _op(a, at, ta, m, k, lda, sa, count)
        opb = _op(b, bt, tb, k, n, ldb, sb, count)
        al, be = _read_scalar(alpha, compute_wide), _read_scalar(beta, compute_wide)
        out = _view(c, ct, m, n, ldc, sc, count)
        with np.errstate(all="ignore"):  # cuBLAS gives inf / NaN without a word
            prod = np.matmul(opa, opb)
            res = al * prod if al != 1 else prod
            if be != 0:
                res = res + be * out.astype(compute_wide)
            out[...] = res.astype(compute_wide).astype(ct)

    # -- float32 / float64 ------------------------------------------------------------------------
    def sgemm(self, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
        self._run("sgemm", ta, tb, m, n, k, alpha, a, 0, lda, 0, b, 0, ldb, 0, beta, c, 0,
                  ldc, 0, 1, np.float32)  # fmt: skip

    def dgemm(self, h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
        self._run("dgemm", ta, tb, m, n, k, alpha, a, 1, lda, 0, b, 1, ldb, 0, beta, c, 1,
                  ldc, 0, 1, np.float64)  # fmt: skip

    def sgemmStridedBatched(self, h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c,
                            ldc, sc, count):  # fmt: skip
        self._run("sgemmStridedBatched", ta, tb, m, n, k, alpha, a, 0, lda, sa, b, 0, ldb, sb,
                  beta, c, 0, ldc, sc, count, np.float32)  # fmt: skip

    def dgemmStridedBatched(self, h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c,
                            ldc, sc, count):  # fmt: skip
        self._run("dgemmStridedBatched", ta, tb, m, n, k, alpha, a, 1, lda, sa, b, 1, ldb, sb,
                  beta, c, 1, ldc, sc, count, np.float64)  # fmt: skip

    # -- mixed types (half storage, float32 compute) ------------------------------------------
    def gemmEx(self, h, ta, tb, m, n, k, alpha, a, atype, lda, b, btype, ldb, beta, c, ctype,
               ldc, compute, algo):  # fmt: skip
        if compute != COMPUTE_32F:
            raise CUBLASError(f"fake cuBLAS: compute type {compute} is not emulated")
        self._run("gemmEx", ta, tb, m, n, k, alpha, a, atype, lda, 0, b, btype, ldb, 0, beta, c,
                  ctype, ldc, 0, 1, np.float32)  # fmt: skip

    def gemmStridedBatchedEx(self, h, ta, tb, m, n, k, alpha, a, atype, lda, sa, b, btype, ldb,
                             sb, beta, c, ctype, ldc, sc, count, compute, algo):  # fmt: skip
        if compute != COMPUTE_32F:
            raise CUBLASError(f"fake cuBLAS: compute type {compute} is not emulated")
        self._run("gemmStridedBatchedEx", ta, tb, m, n, k, alpha, a, atype, lda, sa, b, btype,
                  ldb, sb, beta, c, ctype, ldc, sc, count, np.float32)  # fmt: skip
