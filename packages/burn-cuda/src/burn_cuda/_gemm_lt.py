"""A linear layer's forward as one cuBLASLt GEMM whose epilogue adds the bias (issue 35 item 3),
and its weight and bias gradients as one GEMM whose epilogue writes the bias gradient.

Why: `linear` was a cuBLAS GEMM and then burn_gpu's in-place `bias_add` kernel, which reads and
writes the whole output again. On the H200's transformer step (issue 35) those were 37 kernels
of their own, 0.51 ms of a 14.8 ms step, where torch's `addmm` adds the bias in cuBLASLt's
epilogue (`CUBLASLT_EPILOGUE_BIAS`). Here too: `out = x @ w + bias` is one `cublasLtMatmul`,
the bias added to the float32 accumulator before the single rounding to the output type.

The backward (`weight_bias_grad`, half types only): dW = x^T @ g with `CUBLASLT_EPILOGUE_BGRADA`,
db = the sums of g over the rows, replacing the reduction kernel `linear_bias_backward` launched
per layer (36 of them in issue 35's transformer step); for float32 cuBLASLt's BGRADA kernels were
slower than the GEMM and the column sum together (see `weight_bias_grad`).

Covered: float32 (without TF32), float16 and bfloat16 with float32 compute; x [m, k] and
w [k, n] each row-major or a transposed view of one (as `_gemm._layout` reads them), a
contiguous bias [n] of the same dtype. Anything else, or a shape cuBLASLt has no kernel for
(its heuristic returns none: remembered per shape in `REFUSED`), returns None and the caller
runs the GEMM + bias kernel path. `BURN_CUDA_LT=0` turns it off (or `BURN_CUDA_DIRECT_GEMM=0`).

Per shape (and pointer alignment, and calling thread) the descriptors, layouts and cuBLASLt's chosen algorithm are
made once (`_plan`; the preference is destroyed once the heuristic answered, a refused shape's
handles at once, and past `MAX_PLANS` a new plan destroys the calling thread's: no handle is
lost when shapes keep changing); a call then sets the bias pointer and calls `cublasLtMatmul` on the current
stream with a 4 MiB workspace owned here, one per GPU, allocated before any step capture
(`prepare`, from `_capture_blas.begin`), so a captured step's GEMMs are graph nodes with fixed
workspace addresses. The CPU stand-in binds `fake_cupy.FakeCupy.cublaslt` instead of the library.

Example:
    >>> out = linear_bias(x, w, b)   # doctest: +SKIP  (cupy arrays [m, k], [k, n], [n])
"""

from __future__ import annotations

import os
import threading

import numpy as np

from . import _gemm
from ._dtypes import HALF_DTYPES
from ._lt_api import DESC_EPILOGUE, DESC_TRANSA, DESC_TRANSB, EPILOGUE_BGRADA, EPILOGUE_BIAS
from ._lt_api import EPILOGUE_DEFAULT

ENABLED = _gemm.ENABLED and os.environ.get("BURN_CUDA_LT", "1") != "0"
#: bytes of each GPU's cuBLASLt workspace (torch gives its Lt calls 1-4 MiB on Hopper)
WORKSPACE_BYTES = 4 << 20
_F32 = np.dtype(np.float32)
#: output dtype -> cudaDataType (CUDA_R_32F = 0; the half types' as `_gemm.HALF_TYPES`)
LT_TYPES = {_F32: 0, **_gemm.HALF_TYPES}
_STATE: dict = {"api": None, "error": None}
_DEVICES: dict = {}  # device id -> (Lt handle, workspace array)
_PLANS: dict = {}  # plan key -> (desc, A layout, B layout, D layout, algo buffer, ws bytes)
#: plans kept (shapes vary: a new one past this evicts the thread's own, freeing their handles)
MAX_PLANS = 512
#: plan key -> why cuBLASLt took no kernel for it (the GEMM + bias kernel path runs instead)
REFUSED: dict = {}
_LOCK = threading.Lock()
#: a plan's epilogue (the bias added, the bias gradient written, none) and its cublasLtEpilogue_t
_BIAS, _BGRAD, _NONE = 0, 1, 2
_EPILOGUES = (EPILOGUE_BIAS, EPILOGUE_BGRADA, EPILOGUE_DEFAULT)
#: calls `linear_bias` answered, for tests and probes
STATS = {"calls": 0, "grad_calls": 0}


def _api(cp):
    """The cuBLASLt binding: the stand-in's (`cp.cublaslt`) or the loaded library's."""
    api = _STATE["api"]
    if api is None:
        fake = getattr(cp, "cublaslt", None)
        if fake is not None:
            api = fake
        else:
            from ._lt_api import load

            api = load()
        _STATE["api"] = api
    return api


def prepare(cp, dev: int):
    """(Lt handle, workspace) of GPU `dev`, made on first use; None when cuBLASLt cannot be
    loaded (its error kept in `_STATE["error"]`). Called outside any capture: allocating the
    workspace inside one would put it in the capture's pool."""
    got = _DEVICES.get(dev)
    if got is not None or _STATE["error"] is not None:
        return got
    with _LOCK:
        if dev not in _DEVICES:
            try:
                api = _api(cp)
                with cp.cuda.Device(dev):
                    _DEVICES[dev] = (api.create(), cp.empty(WORKSPACE_BYTES, cp.uint8))
            except (OSError, RuntimeError, AttributeError) as e:
                _STATE["error"] = f"{type(e).__name__}: {e}"
                return None
    return _DEVICES[dev]


def _align(ptr: int) -> int:
    """The largest power of two up to 16 dividing address `ptr`: what cuBLASLt's kernels ask
    of a pointer (16-byte vector loads) and its heuristic is told, so arrays of cupy's pool
    (512-byte blocks) and of other allocators share one plan per shape."""
    return min(16, ptr & -ptr) if ptr else 16


def linear_bias(x, w, bias):
    """`x @ w + bias` as one cuBLASLt call, or None when not covered (module docstring).

    Shapes: x [m, k], w [k, n], bias [n] -> [m, n].
    """
    dt = x.dtype
    if bias.dtype != dt or bias.ndim != 1 or not bias._c_contiguous:
        return None
    if x.ndim != 2 or w.ndim != 2 or bias.shape[0] != w.shape[1]:
        return None
    return _gemm_vec(x, w, bias, False)


def weight_bias_grad(x, g):
    """(x^T @ g, g summed over its rows) as one cuBLASLt call whose epilogue writes the bias
    gradient (`CUBLASLT_EPILOGUE_BGRADA`: the sums of cuBLASLt's A, which is g, over k), or
    None when not covered: a linear layer's weight and bias gradients in one kernel where
    they were a GEMM and a reduction.

    Shapes: x [m, k], g [m, n] -> ([k, n], [n]).
    """
    if x.ndim != 2 or g.ndim != 2 or x.shape[0] != g.shape[0]:
        return None
    if g.dtype not in HALF_DTYPES:
        # float32: cuBLASLt's BGRADA kernels are SIMT ones (`cutlass_80_simt_sgemm_*_align1`)
        # with a memset each; on the H200's captured transformer step the GPU time rose 13.69
        # -> 14.22 ms where the column sums cost 0.25 ms (`benches/probes/lt_grad.py`: 0.079 vs
        # 0.059 ms at 4096 x 512 -> 512). bf16 / f16: 0.025 vs 0.054 ms per layer (one launch)
        return None
    cp = _gemm._libs()[0]
    n = g.shape[1]
    db = cp.ndarray((n,), g.dtype) if g.dtype.itemsize != 2 else _gemm.half_empty((n,), g.dtype)
    dw = _gemm_vec(x.T, g, db, True)
    return None if dw is None else (dw, db)


def linear_wide(x, w, bias):
    """`x @ w + bias` of half operands into float32, one cuBLASLt call (the bias, float32, in
    its epilogue; None: no bias), or None when not covered: autocast's linear (`linear_half`),
    where the half product was a GEMM, a widening cast and a broadcast add.

    Shapes: x [m, k], w [k, n] (one half dtype), bias [n] float32 or None -> [m, n] float32.
    """
    if x.ndim != 2 or w.ndim != 2:
        return None
    if bias is not None and (
        bias.ndim != 1 or not bias._c_contiguous or bias.shape[0] != w.shape[1]
    ):
        return None
    return _gemm_vec(x, w, bias, False, _F32)


def grads_wide(x, w, g, want_x: bool, want_wb: tuple) -> tuple | None:
    """Autocast's linear gradients from half x [m, k], w [k, n] and the half output gradient
    g [m, n], each written float32 by its GEMM: (dx = g @ w^T if `want_x`, dw = x^T @ g if
    `want_wb[0]`, db = g's sums over its rows if `want_wb[1]`, in dw's epilogue), None for
    those not wanted; None when a GEMM is not covered (nothing is half-done: the caller
    recomputes all)."""
    cp = _gemm._libs()[0]
    dx = dw = db = None
    if want_x:
        dx = _gemm_vec(g, w.T, None, False, _F32)
        if dx is None:
            return None
    if want_wb[0]:
        db = cp.ndarray((g.shape[1],), _F32) if want_wb[1] else None
        dw = _gemm_vec(x.T, g, db, True, _F32)
        if dw is None:
            return None
    return dx, dw, db


def _gemm_vec(x, w, vec, grad: bool, out_dt=None):
    """`x @ w` [m, n] with cuBLASLt's epilogue on the vector `vec` [n]: added to every row
    (`grad` False, the bias) or written with the sums of w over k (`grad` True, BGRADA); no
    epilogue when `vec` is None. `out_dt` (default: the operands' dtype) is D's and the
    vector's dtype: float32 over half operands is autocast's GEMM (`linear_half`)."""
    dt = x.dtype
    odt = dt if out_dt is None else out_dt
    if dt not in LT_TYPES or w.dtype != dt or odt not in LT_TYPES:
        return None
    if vec is not None and vec.dtype != odt:
        return None
    m, k = x.shape
    n = w.shape[1]
    if w.shape[0] != k or not m or not n or not k or max(m, n, k) >= 2**31:
        return None
    la, lb = _gemm._layout(x, m, k), _gemm._layout(w, k, n)
    if la is None or lb is None:
        return None
    cp = _gemm._libs()[0]
    dev = cp.cuda.runtime.getDevice()
    state = _DEVICES.get(dev)
    if state is None:
        from . import _capture_blas

        if _capture_blas.active():  # no allocation while a step records
            return None
        state = prepare(cp, dev)
        if state is None:
            return None
    handle, ws = state
    out = cp.ndarray((m, n), odt) if odt.itemsize != 2 else _gemm.half_empty((m, n), odt)
    xp, wp, op = x.data.ptr, w.data.ptr, out.data.ptr
    bp = 0 if vec is None else vec.data.ptr
    (ta, lda), (tb, ldb) = la, lb
    epi = _NONE if vec is None else (_BGRAD if grad else _BIAS)
    # per thread too: a call sets the plan's descriptor's bias pointer, then runs it, so two
    # threads on one GPU must not share a descriptor
    key = (dev, dt, m, n, k, ta, tb, lda, ldb, _align(xp), _align(wp), _align(op), _align(bp),
           threading.get_ident(), epi, odt)  # fmt: skip
    plan = _PLANS.get(key)
    if plan is None:
        if key in REFUSED:
            return None
        plan = _plan(cp, handle, key, bp)
        if plan is None:
            return None
    desc, a_lay, b_lay, d_lay, algo, ws_bytes = plan
    api = _STATE["api"]
    if bp:
        api.desc_set_bias(desc, bp)
    one, zero = _gemm._SCALARS[dt]
    # column-major D^T[n, m] = op(w)^T-side first, as `_gemm.matmul`: A = w, B = x
    api.matmul(handle, desc, one, wp, a_lay, xp, b_lay, zero, op, d_lay, op, d_lay, algo,
               ws.data.ptr, ws_bytes, cp.cuda.get_current_stream().ptr)  # fmt: skip
    STATS["grad_calls" if grad else "calls"] += 1
    return out


def _evict(api) -> None:
    """Make room in `_PLANS`: this thread's plans are dropped and their descriptors, layouts
    and algorithm buffers freed (no other thread uses them: a key holds its thread); other
    threads' plans are dropped only if that was not enough, and not freed (one of them may be
    running its plan now)."""
    me = threading.get_ident()
    for k in [k for k in list(_PLANS) if k[13] == me]:  # list(): other threads may insert
        _destroy(api, _PLANS.pop(k))
    if len(_PLANS) >= MAX_PLANS:
        _PLANS.clear()


def _destroy(api, plan) -> None:
    desc, a_lay, b_lay, d_lay, algo, _ws = plan
    api.desc_destroy(desc)
    for lay in (a_lay, b_lay, d_lay):
        api.layout_destroy(lay)
    if algo is not None:
        api.algo_free(algo)


def _plan(cp, handle, key, bias_ptr: int):
    """Descriptors, layouts and algorithm for `key` (`linear_bias`'s), cached; None (and the
    reason in `REFUSED`) when cuBLASLt's heuristic has no kernel for them."""
    _dev, dt, m, n, k, ta, tb, lda, ldb, ax, aw, ao, _ab, _thread, epi, odt = key
    api = _STATE["api"]
    ctype = LT_TYPES[dt]
    desc = api.desc_create(_gemm.COMPUTE_32F, 0)  # float32 compute and alpha / beta
    api.desc_set_int(desc, DESC_TRANSA, int(tb))
    api.desc_set_int(desc, DESC_TRANSB, int(ta))
    api.desc_set_int(desc, DESC_EPILOGUE, _EPILOGUES[epi])
    if bias_ptr:
        api.desc_set_bias(desc, bias_ptr)  # its alignment steers the heuristic
    # each operand as stored (column-major): A = w, n x k (k x n when transposed), B = x; D
    # (and the epilogue's vector) of `odt`
    a_lay = api.layout_create(ctype, k if tb else n, n if tb else k, ldb)
    b_lay = api.layout_create(ctype, m if ta else k, k if ta else m, lda)
    d_lay = api.layout_create(LT_TYPES[odt], n, m, n)
    pref = api.pref_create(WORKSPACE_BYTES, (aw, ax, ao, ao))
    try:  # the preference only steers the heuristic
        got = api.heuristic(handle, desc, a_lay, b_lay, d_lay, d_lay, pref)
    finally:
        api.pref_destroy(pref)
    if got is not None and got[1] > WORKSPACE_BYTES:
        REFUSED[key] = f"the algorithm wants {got[1]} bytes of workspace"
        got = None
    elif got is None:
        REFUSED[key] = "cublasLtMatmulAlgoGetHeuristic returned no algorithm"
    if got is None:
        _destroy(api, (desc, a_lay, b_lay, d_lay, None, 0))
        return None
    algo_bytes, ws_bytes = got
    algo = api.algo_buffer(algo_bytes)
    plan = (desc, a_lay, b_lay, d_lay, algo, ws_bytes)
    if len(_PLANS) >= MAX_PLANS:  # bounded for varying shapes
        _evict(api)
    _PLANS[key] = plan
    return plan
