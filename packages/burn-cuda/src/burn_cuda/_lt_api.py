"""cuBLASLt's matmul entry points through ctypes, over the libcublasLt this process loaded.

cupy binds cuBLAS but not cuBLASLt, the library whose epilogues add a bias inside the GEMM
(`_gemm_lt.py`). `LtApi` exposes the few C functions it needs with ints for pointers and
handles; the CPU stand-in (`packages/burn-cuda/tests/fake_cublaslt.py`) implements the same
methods on numpy. Status codes other than CUBLAS_STATUS_SUCCESS raise `LtError` naming the
function. Enum values are those of `cublasLt.h` (CUDA 12 and 13).
"""

from __future__ import annotations

import ctypes

#: cublasLtMatmulDescAttributes_t
DESC_TRANSA, DESC_TRANSB, DESC_EPILOGUE, DESC_BIAS_POINTER = 3, 4, 7, 8
#: cublasLtEpilogue_t: none (the plain product)
EPILOGUE_DEFAULT = 1
#: the bias (a vector of D's rows) added to every column of D
EPILOGUE_BIAS = 4
#: the bias gradient of A (the sums of A over k, one per row of D) written to the bias pointer
EPILOGUE_BGRADA = 256
#: cublasLtMatmulPreferenceAttributes_t: uint64 bytes of workspace an algorithm may use, and
#: the uint32 alignments (bytes) of A, B, C and D's pointers it may assume (default 256)
PREF_MAX_WORKSPACE_BYTES = 1
PREF_MIN_ALIGNMENT = (5, 6, 7, 8)
#: sizeof(cublasLtMatmulHeuristicResult_t): algo (8 uint64), size_t workspaceSize,
#: cublasStatus_t state, float wavesCount, int reserved[4]
HEURISTIC_BYTES = 96
ALGO_BYTES = 64


class LtError(RuntimeError):
    """A cuBLASLt call returned an error status."""


class LtApi:
    """The cuBLASLt functions `_gemm_lt` calls (pointers and handles as ints)."""

    def __init__(self, lib):
        P, I, U64, I64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64, ctypes.c_int64  # noqa: E741

        def fn(name, args):
            f = getattr(lib, name)
            f.argtypes, f.restype = args, ctypes.c_int
            return f

        self._create = fn("cublasLtCreate", [P])
        self._desc_create = fn("cublasLtMatmulDescCreate", [P, I, I])
        self._desc_set = fn("cublasLtMatmulDescSetAttribute", [P, I, P, ctypes.c_size_t])
        self._layout_create = fn("cublasLtMatrixLayoutCreate", [P, I, U64, U64, I64])
        self._pref_create = fn("cublasLtMatmulPreferenceCreate", [P])
        self._pref_set = fn("cublasLtMatmulPreferenceSetAttribute", [P, I, P, ctypes.c_size_t])
        self._heuristic = fn("cublasLtMatmulAlgoGetHeuristic", [P, P, P, P, P, P, P, I, P, P])
        # (handle, desc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo, workspace,
        #  workspace bytes, stream)
        self.matmul_fn = fn("cublasLtMatmul", [P] * 14 + [ctypes.c_size_t, P])
        self._desc_destroy = fn("cublasLtMatmulDescDestroy", [P])
        self._layout_destroy = fn("cublasLtMatrixLayoutDestroy", [P])
        self._pref_destroy = fn("cublasLtMatmulPreferenceDestroy", [P])
        #: address -> the algorithm buffer handed out there (freed by `algo_free`)
        self._keep: dict = {}

    @staticmethod
    def check(name: str, status: int) -> None:
        if status != 0:
            raise LtError(f"burn_cuda: {name} failed (cublasStatus_t {status})")

    def _out_handle(self, name, f, *args) -> int:
        h = ctypes.c_void_p()
        self.check(name, f(ctypes.byref(h), *args))
        return int(h.value or 0)

    def create(self) -> int:
        return self._out_handle("cublasLtCreate", self._create)

    def desc_create(self, compute: int, scale: int) -> int:
        return self._out_handle("cublasLtMatmulDescCreate", self._desc_create, compute, scale)

    def desc_set_int(self, desc: int, attr: int, value: int) -> None:
        v = ctypes.c_int32(value)
        self.check("cublasLtMatmulDescSetAttribute",
                   self._desc_set(desc, attr, ctypes.byref(v), 4))  # fmt: skip

    def desc_set_bias(self, desc: int, ptr: int) -> None:
        """CUBLASLT_MATMUL_DESC_BIAS_POINTER = `ptr` (one call per GEMM: the bias moves). The
        pointer's bytes are a buffer of this call's own: a shared one could be overwritten by
        another device's thread (data parallel) between the store and cuBLASLt's read."""
        status = self._desc_set(desc, DESC_BIAS_POINTER, ctypes.byref(ctypes.c_void_p(ptr)), 8)
        if status:
            self.check("cublasLtMatmulDescSetAttribute(BIAS_POINTER)", status)

    def layout_create(self, dtype: int, rows: int, cols: int, ld: int) -> int:
        return self._out_handle("cublasLtMatrixLayoutCreate", self._layout_create, dtype,
                                rows, cols, ld)  # fmt: skip

    def pref_create(self, workspace: int, aligns: tuple) -> int:
        """A preference of at most `workspace` bytes and A, B, C, D pointers aligned to
        `aligns` bytes (heuristics otherwise assume 256 and may pick a kernel that faults)."""
        pref = self._out_handle("cublasLtMatmulPreferenceCreate", self._pref_create)
        v = ctypes.c_uint64(workspace)
        name = "cublasLtMatmulPreferenceSetAttribute"
        self.check(name, self._pref_set(pref, PREF_MAX_WORKSPACE_BYTES, ctypes.byref(v), 8))
        for attr, align in zip(PREF_MIN_ALIGNMENT, aligns):
            a = ctypes.c_uint32(align)
            self.check(name, self._pref_set(pref, attr, ctypes.byref(a), 4))
        return pref

    def heuristic(self, handle, desc, a, b, c, d, pref):
        """(algo bytes, workspace bytes) of cuBLASLt's first choice, or None when it has none
        for these descriptors (an epilogue or layout no kernel takes)."""
        res = ctypes.create_string_buffer(HEURISTIC_BYTES)
        n = ctypes.c_int(0)
        status = self._heuristic(handle, desc, a, b, c, d, pref, 1, res, ctypes.byref(n))
        if status or n.value < 1:
            return None
        ws = ctypes.c_size_t.from_buffer(res, ALGO_BYTES).value
        return res.raw[:ALGO_BYTES], ws

    def algo_buffer(self, raw: bytes) -> int:
        """The address of a buffer holding algorithm bytes `raw`, kept until `algo_free`."""
        buf = ctypes.create_string_buffer(raw, ALGO_BYTES)
        addr = ctypes.addressof(buf)
        self._keep[addr] = buf
        return addr

    def algo_free(self, addr: int) -> None:
        self._keep.pop(addr, None)

    def desc_destroy(self, desc: int) -> None:
        self.check("cublasLtMatmulDescDestroy", self._desc_destroy(desc))

    def layout_destroy(self, layout: int) -> None:
        self.check("cublasLtMatrixLayoutDestroy", self._layout_destroy(layout))

    def pref_destroy(self, pref: int) -> None:
        self.check("cublasLtMatmulPreferenceDestroy", self._pref_destroy(pref))

    def matmul(self, *args) -> None:
        status = self.matmul_fn(*args)
        if status:
            self.check("cublasLtMatmul", status)


def load() -> LtApi:
    """`LtApi` over the libcublasLt loaded beside cupy's libcublas (which links it), found by
    its path in this process's memory map so the calls go to that one library instance."""
    from cupy_backends.cuda.libs import cublas  # noqa: F401 - loads libcublas and libcublasLt

    with open("/proc/self/maps") as f:
        for line in f:
            path = line.rsplit(" ", 1)[-1].strip()
            if path.rsplit("/", 1)[-1].startswith("libcublasLt.so"):
                return LtApi(ctypes.CDLL(path))
    raise LtError("burn_cuda: libcublasLt is not loaded in this process (cupy's libcublas "
                  "links it)")  # fmt: skip
