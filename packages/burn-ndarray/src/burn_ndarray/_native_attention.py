"""`attention` / `attention_backward` on the native kernels (`_native/attn.c`), float32/float64.

One ctypes call each: OpenMP tasks of (batch item, head[, query block]), each running its GEMMs
with numpy's BLAS on one thread and its softmax in C. The Python-pool kernel (`_attention.py`)
stays the fallback (no cblas GEMM in numpy's BLAS, other dtypes, empty or zero-width heads,
`BURN_NDARRAY_NATIVE_ATTENTION=0`).

Why: the Python-pool kernel's tasks are ~10 numpy calls each, whose Python parts take the GIL
in turn; with many threads the tasks queue on the GIL (issue 36: the transformer step on 16
cores). Here the only Python is the call.

Layouts: q, k, v and the gradient are read through their strides (the heads of a
[b, s, h, d] buffer seen as [b, h, s, d] are not copied; a last dim that is not unit-strided
is); each output is written in the memory order of its input (`_like`): attention's output
follows q's, so `MultiHeadAttention`'s swap back to [b, s, h, d] and its reshape are views.
Results do not depend on the thread count (the split depends on the shapes only).
Dropout on the weights runs inside the kernels (`_drop`: the seed words and threshold of
`burn_tensor._attention_dropout`'s hash, which the kernels recompute in the backward).
"""

from __future__ import annotations

import ctypes
import os

import numpy as np

from . import _native_conv
from . import _native_ops as _ops
from burn_tensor.ops import attention_drop_threshold as threshold

from ._attention import SCORES_BACKWARD
from ._native_ops import F32, F64

#: query rows per backward block at most (the block's [rows, seq_k] scores stay ~2^17 elements)
BACKWARD_ROWS = 128


def declare(lib) -> None:
    p, L, i, d = ctypes.c_void_p, ctypes.c_long, ctypes.c_int, ctypes.c_double
    for t in ("f32", "f64"):
        fn = getattr(lib, f"attn_fwd_{t}")
        fn.argtypes, fn.restype = (p, p, p, p, p, p, d, i, i, p, d), i
        fn = getattr(lib, f"attn_bwd_{t}")
        fn.argtypes, fn.restype = (p, p, p, p, p, p, p, p, p, d, i, L, i, p, d), i


def _drop(dropout, seed):
    """(uint32 [seed word 0, seed word 1, threshold] or None, 1 / (1 - p)): the kernels'
    dropout arguments (`burn_tensor._attention_dropout`'s hash)."""
    if not dropout:
        return None, 1.0
    words = [int(w) & 0xFFFFFFFF for w in np.asarray(seed).reshape(-1)[:2]]
    return np.array([*words, threshold(dropout)], np.uint32), 1.0 / (1.0 - dropout)


def _strided(a):
    """`a` [b, h, s, d] with a unit last stride and non-negative strides (else a copy), and its
    (batch, head, row) strides in elements."""
    it = a.itemsize
    rows, d = a.shape[2], a.shape[3]
    bad_last = a.strides[3] != it and d > 1
    overlapping = rows > 1 and a.strides[2] < it * d  # e.g. rows broadcast by an expand
    if bad_last or overlapping or any(s < 0 or s % it for s in a.strides):
        a = np.ascontiguousarray(a)
    sb, sh, ss, _ = (s // it for s in a.strides)
    return a, [sb, sh, ss if rows > 1 else max(d, 1)]


def _like(a, shape):
    """An empty [b, h, s, d'] array in the memory order of `a`: [b, s, h, d'] behind a
    transpose when `a`'s rows are farther apart than its heads, else contiguous."""
    if a.shape[1] > 1 and a.shape[2] > 1 and a.strides[2] > a.strides[1]:
        b, h, s, d = shape
        return np.empty((b, s, h, d), a.dtype).transpose(0, 2, 1, 3)
    return np.empty(shape, a.dtype)


def _out_strides(o):
    it = o.itemsize
    sb, sh, ss, _ = (s // it for s in o.strides)
    return [sb, sh, max(ss, o.shape[3], 1)]


def _mask(mask, shape):
    """(uint8 view broadcast to shape, its 4 strides) or (None, zeros)."""
    if mask is None:
        return None, [0, 0, 0, 0]
    m = np.broadcast_to(mask, shape)
    if m.dtype != np.bool_ or any(s < 0 for s in m.strides):
        m = np.ascontiguousarray(m, np.bool_)
    return m.view(np.uint8), list(m.strides)


def _covered(q, k, v, mask) -> bool:
    dt = q.dtype
    if (dt != F32 and dt != F64) or k.dtype != dt or v.dtype != dt:
        return False
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4 or min(q.shape + k.shape[2:] + v.shape[3:]) < 1:
        return False
    b, h, _, d = q.shape
    if k.shape[:2] != (b, h) or v.shape[:3] != k.shape[:3] or k.shape[3] != d:
        return False
    return mask is None or mask.ndim == 4


def install(backend, lib, m: int, ops: dict) -> None:
    if os.environ.get("BURN_NDARRAY_NATIVE_ATTENTION", "1").strip() == "0":
        return
    if not _native_conv._Gemm.ready(lib):
        return
    threads = backend.num_threads
    prev_fwd, prev_bwd = backend.attention, backend.attention_backward
    err = "attention: could not allocate its score buffers"

    def attention(query, key, value, mask, causal, scale, dropout=0.0, seed=None):
        if not _covered(query, key, value, mask):
            return prev_fwd(query, key, value, mask, causal, scale, dropout, seed)
        drop, rp = _drop(dropout, seed)
        q, qs = _strided(query)
        k, ks = _strided(key)
        v, vs = _strided(value)
        b, h, sq, d = q.shape
        sk, dv = k.shape[2], v.shape[3]
        mk, ms = _mask(mask, (b, h, sq, sk))
        out = _like(query, (b, h, sq, dv))
        g = np.array([b, h, sq, sk, d, dv, *qs, *ks, *vs, *_out_strides(out), *ms], np.int64)
        tasks = b * h * -(-sq // 128)
        nt = _ops.team(threads, tasks, b * h * sq * sk * (d + dv))
        fn = lib.attn_fwd_f32 if q.dtype == F32 else lib.attn_fwd_f64
        p = _ops._ptr
        _native_conv._run(
            fn, threads, p(q), p(k), p(v), None if mk is None else p(mk), p(out), p(g),
            float(scale), int(bool(causal)), nt, None if drop is None else p(drop), rp, error=err,
        )  # fmt: skip
        return out

    def attention_backward(
        query, key, value, mask, output_grad, causal, scale, dropout=0.0, seed=None
    ):
        grad = output_grad
        if not _covered(query, key, value, mask) or grad.dtype != query.dtype:
            return prev_bwd(query, key, value, mask, output_grad, causal, scale, dropout, seed)
        b, h, sq, d = query.shape
        if grad.shape != (b, h, sq, value.shape[3]):
            return prev_bwd(query, key, value, mask, output_grad, causal, scale, dropout, seed)
        q, qs = _strided(query)
        k, ks = _strided(key)
        v, vs = _strided(value)
        gr, gs = _strided(grad)
        drop, rp = _drop(dropout, seed)
        sk, dv = k.shape[2], v.shape[3]
        mk, ms = _mask(mask, (b, h, sq, sk))
        dq, dk, dvv = _like(query, q.shape), _like(key, k.shape), _like(value, v.shape)
        strides = [*qs, *ks, *vs, *gs, *_out_strides(dq), *_out_strides(dk), *_out_strides(dvv)]
        g = np.array([b, h, sq, sk, d, dv, *strides, *ms], np.int64)
        rows = int(max(16, min(BACKWARD_ROWS, SCORES_BACKWARD // sk)))
        nt = _ops.team(threads, b * h, 2 * b * h * sq * sk * (d + dv))
        fn = lib.attn_bwd_f32 if q.dtype == F32 else lib.attn_bwd_f64
        p = _ops._ptr
        _native_conv._run(
            fn, threads, p(q), p(k), p(v), None if mk is None else p(mk), p(gr), p(dq), p(dk),
            p(dvv), p(g), float(scale), int(bool(causal)), rows, nt,
            None if drop is None else p(drop), rp, error=err,
        )  # fmt: skip
        return dq, dk, dvv

    ops["attention"] = attention
    ops["attention_backward"] = attention_backward


__all__ = ["declare", "install"]
