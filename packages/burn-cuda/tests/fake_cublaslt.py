"""A stand-in for cuBLASLt (`burn_cuda._lt_api.LtApi`) on numpy, for the CPU stand-in: the
descriptor, layout, preference and heuristic calls `_gemm_lt` makes, and `cublasLtMatmul` with
the bias and bias-gradient (BGRADA) epilogues, reading and writing the stand-in's memory through the raw addresses passed
(so a wrong layout, transpose flag or bias pointer gives a wrong result here as on the GPU).

Attributes are checked by the numbers of `cublasLt.h` (written here from the header's
documentation, apart from `_lt_api`'s constants): an attribute or epilogue this stand-in does not
know raises. The product is float32 (`np.matmul` of the widened operands), the bias added in
float32, then one rounding to the storage type, what CUBLAS_COMPUTE_32F with the bias epilogue
does up to the order of the sums. `calls` records ("matmul", m, n, k) per GEMM; `refuse` makes the
heuristic return no algorithm (as cuBLASLt does for a combination it has no kernel for).
Destroying a handle that is not a live object of its kind raises; `live()` counts what is left.
"""

from __future__ import annotations

import ctypes
import itertools

import numpy as np
from fake_cublas import COMPUTE_32F, CUBLASError, _dtype, _op, _read_scalar, _view

#: cublasLtMatmulDescAttributes_t: TRANSA, TRANSB, EPILOGUE, BIAS_POINTER
_TRANSA, _TRANSB, _EPILOGUE, _BIAS = 3, 4, 7, 8
#: cublasLtEpilogue_t: DEFAULT, BIAS
_EPI_DEFAULT, _EPI_BIAS, _EPI_BGRADA = 1, 4, 256
#: cublasLtMatmulPreferenceAttributes_t: MAX_WORKSPACE_BYTES, MIN_ALIGNMENT_{A,B,C,D}_BYTES
_PREF_WS, _PREF_ALIGN = 1, (5, 6, 7, 8)


class FakeCublasLt:
    """`LtApi`'s methods (see the module docstring)."""

    def __init__(self, execute: bool = True):
        self.execute = execute
        self.calls: list = []
        self.refuse = False
        self._ids = itertools.count(0x1000)
        self._objs: dict = {}
        self._keep: list = []
        #: addresses of the algorithm buffers handed out and not freed
        self.algos: set = set()

    def _new(self, obj) -> int:
        h = next(self._ids)
        self._objs[h] = obj
        return h

    def create(self) -> int:
        return self._new({"kind": "handle"})

    def desc_create(self, compute: int, scale: int) -> int:
        if compute != COMPUTE_32F or scale != 0:
            raise CUBLASError(f"fake cuBLASLt: compute {compute} / scale {scale} not emulated")
        return self._new({"kind": "desc", _TRANSA: 0, _TRANSB: 0, _EPILOGUE: _EPI_DEFAULT,
                          _BIAS: 0})  # fmt: skip

    def desc_set_int(self, desc: int, attr: int, value: int) -> None:
        if attr not in (_TRANSA, _TRANSB, _EPILOGUE):
            raise CUBLASError(f"fake cuBLASLt: int attribute {attr} not emulated")
        if attr == _EPILOGUE and value not in (_EPI_DEFAULT, _EPI_BIAS, _EPI_BGRADA):
            raise CUBLASError(f"fake cuBLASLt: epilogue {value} not emulated")
        self._objs[desc][attr] = int(value)

    def desc_set_bias(self, desc: int, ptr: int) -> None:
        self._objs[desc][_BIAS] = int(ptr)

    def layout_create(self, dtype: int, rows: int, cols: int, ld: int) -> int:
        if ld < max(1, rows):
            raise CUBLASError(f"fake cuBLASLt: leading dimension {ld} < rows {rows}")
        return self._new({"kind": "layout", "dtype": _dtype(dtype), "rows": rows,
                          "cols": cols, "ld": ld})  # fmt: skip

    def pref_create(self, workspace: int, aligns: tuple) -> int:
        if len(aligns) != len(_PREF_ALIGN) or any(a & (a - 1) or a > 256 for a in aligns):
            raise CUBLASError(f"fake cuBLASLt: alignments {aligns} are not powers of two <= 256")
        return self._new({"kind": "pref", _PREF_WS: workspace, "aligns": tuple(aligns)})

    def heuristic(self, handle, desc, a, b, c, d, pref):
        if self.refuse:
            return None
        for h in (handle, desc, a, b, c, d, pref):
            if h not in self._objs:
                raise CUBLASError(f"fake cuBLASLt: unknown handle {h:#x}")
        return bytes(64), 0

    def algo_buffer(self, raw: bytes) -> int:
        buf = ctypes.create_string_buffer(raw, 64)
        self._keep.append(buf)
        self.algos.add(ctypes.addressof(buf))
        return ctypes.addressof(buf)

    def algo_free(self, addr: int) -> None:
        self.algos.discard(addr)

    def _destroy(self, kind: str, h: int) -> None:
        obj = self._objs.get(h)
        if obj is None or obj["kind"] != kind:
            raise CUBLASError(f"fake cuBLASLt: destroying {h:#x}, which is no live {kind}")
        del self._objs[h]

    def desc_destroy(self, desc: int) -> None:
        self._destroy("desc", desc)

    def layout_destroy(self, layout: int) -> None:
        self._destroy("layout", layout)

    def pref_destroy(self, pref: int) -> None:
        self._destroy("pref", pref)

    def live(self) -> dict:
        """Live objects by kind (what a leak leaves behind)."""
        out: dict = {}
        for o in self._objs.values():
            out[o["kind"]] = out.get(o["kind"], 0) + 1
        return out

    def matmul(self, handle, desc, alpha, a, adesc, b, bdesc, beta, c, cdesc, d, ddesc, algo,
               ws, ws_bytes, stream):  # fmt: skip
        ds = self._objs[desc]
        la, lb, lc, ld = (self._objs[h] for h in (adesc, bdesc, cdesc, ddesc))
        ta, tb = ds[_TRANSA], ds[_TRANSB]
        m, n = ld["rows"], ld["cols"]
        k = la["rows"] if ta else la["cols"]
        if (lb["cols"] if tb else lb["rows"]) != k or (la["cols"] if ta else la["rows"]) != m:
            raise CUBLASError("fake cuBLASLt: operand layouts do not chain")
        if (lb["rows"] if tb else lb["cols"]) != n:
            raise CUBLASError("fake cuBLASLt: B's columns differ from D's")
        self.calls.append(("matmul", m, n, k))
        if not self.execute:
            return
        opa = _op(a, la["dtype"], ta, m, k, la["ld"], 0, 1)
        opb = _op(b, lb["dtype"], tb, k, n, lb["ld"], 0, 1)
        al, be = _read_scalar(alpha, np.float32), _read_scalar(beta, np.float32)
        out = _view(d, ld["dtype"], m, n, ld["ld"], 0, 1)
        with np.errstate(all="ignore"):
            res = np.matmul(opa, opb)
            res = al * res if al != 1 else res
            if be != 0:
                res = res + be * _view(c, lc["dtype"], m, n, lc["ld"], 0, 1).astype(np.float32)
            if ds[_EPILOGUE] == _EPI_BIAS:
                if not ds[_BIAS]:
                    raise CUBLASError("fake cuBLASLt: bias epilogue without a bias pointer")
                bias = _view(ds[_BIAS], ld["dtype"], m, 1, m, 0, 1).astype(np.float32)
                res = res + bias  # [1, m, 1]: one value per row of D, every column
            if ds[_EPILOGUE] == _EPI_BGRADA:
                if not ds[_BIAS]:
                    raise CUBLASError("fake cuBLASLt: bias-gradient epilogue without a pointer")
                # the sums of op(A) over k, one per row of D, rounded once to D's type
                grad = opa.sum(axis=-1, dtype=np.float32)  # [1, m]
                bv = _view(ds[_BIAS], ld["dtype"], m, 1, m, 0, 1)  # [1, m, 1]
                bv[...] = grad.reshape(bv.shape).astype(ld["dtype"])
            out[...] = res.astype(np.float32).astype(ld["dtype"])
