"""The per-op hot path: precompiled kernels (`_fast_source.py`) launched with as little Python
as possible, in place of cupy's ufunc dispatch (type resolution, broadcasting, argument
packing: ~14 us per op on an H100 host, against a ~5 us kernel launch).

Each op here wraps the table's general implementation (`fallback`, a cupy ufunc or function)
and takes the fast route only for what it covers: float32/float64 (and int32/int64 where the
C expression is Burn's semantics), C-contiguous operands of one dtype, same shapes or a
one-span broadcast (`[outer, 1, inner]` against `[outer, mid, inner]`). Everything else goes to
`fallback` unchanged, so results never depend on which route ran beyond float rounding of the
same expression.

`ops(cp)` returns full op names -> functions taking the backend as `self`; `_backend._install`
puts them over the ufunc entries. The kernels are compiled on first use per (op, dtype) and
device (cupy caches the binaries on disk too).
"""

from __future__ import annotations

import numpy as np
from burn_tensor.ops import op_decl

from . import _fast_source as fsrc
from . import _launch
from ._fast_reduce import _FLOATS, BLOCK, ROW_MAX, SUM_ALL_MAX, reductions  # noqa: F401

#: contiguous elementwise kernels handle 16 bytes per thread
_VEC = {np.dtype(t): 16 // np.dtype(t).itemsize for t in ("float32", "float64", "int32", "int64")}
_INTS = (np.dtype(np.int32), np.dtype(np.int64))


#: (kind, op, dtype name) -> the compiler's message, for kernels that failed to compile: their
#: ops keep using the general implementation (`profile_dispatch.py` prints this)
FAILED: dict = {}
#: (kind, op, dtype name) of every hot-path kernel compiled in this process
COMPILED: set = set()


class _Kernels:
    """(kind, op, dtype) -> compiled `cupy.RawKernel`, built on first use; None when it does not
    compile (the op then falls back for that dtype, and `FAILED` says why)."""

    def __init__(self, cp):
        self.cp = cp
        self.cache: dict = {}

    def get(self, kind: str, op: str, dtype):
        key = (kind, op, dtype)
        try:
            return self.cache[key]
        except KeyError:
            pass
        src, name = fsrc.source(kind, op, dtype)
        k = self.cp.RawKernel(src, name)
        try:
            k.compile()  # NVRTC now, so a failure is seen here and not at a launch
        except Exception as exc:  # noqa: BLE001 - any compiler error: keep the general op
            FAILED[(kind, op, np.dtype(dtype).name)] = f"{type(exc).__name__}: {exc}"[:2000]
            k = None
        else:
            COMPILED.add((kind, op, np.dtype(dtype).name))
        self.cache[key] = k
        return k


def _dtypes_for(op: str) -> tuple:
    return _FLOATS if op in fsrc.FLOAT_ONLY else _FLOATS + _INTS


def _bcast(shape, out_shape):
    """How an operand of `shape` is read for an output of `out_shape` (same rank, broadcastable):
    (0, 0) when equal (index t); (span, inner) with span > 0 when its broadcast dims form one
    run, `[outer, 1, inner]` (index (t / span) * inner + t % inner, span = mid * inner);
    (-keep, inner) when its kept dims form one run, `[1, keep, 1]` against
    `[outer, keep, inner]` (index (t / inner) % keep: a per-channel bias); None otherwise.
    Dims of size 1 on both sides are ignored."""
    if shape == out_shape:
        return 0, 0
    if len(shape) != len(out_shape):
        return None
    bcast = []
    kept = []
    for d in range(len(shape)):
        o = out_shape[d]
        if o == 1:
            continue
        if shape[d] == o:
            kept.append(d)
        elif shape[d] == 1:
            bcast.append(d)
        else:
            return None
    if not bcast:
        return 0, 0
    if _one_run(bcast, kept):
        inner = 1
        for d in range(bcast[-1] + 1, len(out_shape)):
            inner *= out_shape[d]
        mid = 1
        for d in range(bcast[0], bcast[-1] + 1):
            mid *= out_shape[d]
        return mid * inner, inner
    if kept and _one_run(kept, bcast):
        inner = 1
        for d in range(kept[-1] + 1, len(out_shape)):
            inner *= out_shape[d]
        keep = 1
        for d in range(kept[0], kept[-1] + 1):
            keep *= out_shape[d]
        return -keep, inner
    return None


def _one_run(dims, others) -> bool:
    """No dim of `others` lies between the first and last of `dims`."""
    lo, hi = dims[0], dims[-1]
    return not any(lo < d < hi for d in others)


def ops(cp, table: dict, oom=MemoryError) -> dict:
    """Fast versions of the elementwise and reduction ops found in `table` (full op names ->
    function or staticmethod), each falling back to the table's entry. An allocation failure
    (`oom`, cupy's OutOfMemoryError) becomes `CudaOutOfMemoryError` naming the op."""
    from ._memory import oom_error

    kernels = _Kernels(cp)
    get = kernels.get
    go = _launch.launcher(cp, BLOCK)
    cp_new = cp.ndarray
    out: dict = {}

    def alloc_error(name, exc):
        return oom_error(name, exc)

    def plain(fn):
        return fn.__func__ if isinstance(fn, staticmethod) else None

    def binary(name, op, fallback, floats_only):
        fb_static = plain(fallback)
        allowed = _FLOATS if floats_only else _FLOATS + _INTS
        fn_cache: dict = {}

        def run(self, x, y):
            dt = x.dtype
            if (
                y.__class__ is x.__class__
                and y.dtype is dt
                and dt in allowed
                and x._c_contiguous
                and y._c_contiguous
            ):
                shape = x.shape
                yshape = y.shape
                n = x.size
                if shape == yshape:
                    k = (
                        fn_cache[dt]
                        if dt in fn_cache
                        else fn_cache.setdefault(dt, get("binary", op, dt))
                    )
                    if k is not None:
                        try:
                            o = cp_new(shape, dt)
                        except oom as exc:
                            raise alloc_error(name, exc) from exc
                        if n:
                            v = _VEC[dt] * BLOCK
                            go.p3i(k, (n + v - 1) // v, x, y, o, n)
                        return o
                elif len(shape) == len(yshape):
                    oshape = tuple(a if a != 1 else b for a, b in zip(shape, yshape))
                    ga, gb = _bcast(shape, oshape), _bcast(yshape, oshape)
                    k = get("bc", op, dt) if ga is not None and gb is not None else None
                    if k is not None:
                        try:
                            o = cp_new(oshape, dt)
                        except oom as exc:
                            raise alloc_error(name, exc) from exc
                        total = o.size
                        if total:
                            go.args(
                                k,
                                (total + BLOCK - 1) // BLOCK,
                                BLOCK,
                                (x, y, o, total, ga[0], ga[1], gb[0], gb[1]),
                            )
                        return o
            if fb_static is not None:
                return fb_static(x, y)
            return fallback(self, x, y)

        run.__name__ = op
        return run

    def unary(name, op, fallback):
        fb_static = plain(fallback)
        allowed = _dtypes_for(op)
        fn_cache: dict = {}

        def run(self, x):
            dt = x.dtype
            if dt in allowed and x._c_contiguous:
                k = (
                    fn_cache[dt]
                    if dt in fn_cache
                    else fn_cache.setdefault(dt, get("unary", op, dt))
                )
                if k is not None:
                    n = x.size
                    try:
                        o = cp_new(x.shape, dt)
                    except oom as exc:
                        raise alloc_error(name, exc) from exc
                    if n:
                        v = _VEC[dt] * BLOCK
                        go.p2i(k, (n + v - 1) // v, x, o, n)
                    return o
            if fb_static is not None:
                return fb_static(x)
            return fallback(self, x)

        run.__name__ = op
        return run

    def scalar(name, op, fallback):
        fb_static = plain(fallback)
        allowed = _dtypes_for(op)
        fn_cache: dict = {}

        def run(self, x, s):
            dt = x.dtype
            if dt in allowed and x._c_contiguous:
                st = type(s)
                if dt in _FLOATS:
                    if st is not float:
                        if st is not int or abs(s) > 2**53:
                            return _slow(self, x, s)
                        s = float(s)
                elif st is not int or not -(2**63) <= s < 2**63:
                    return _slow(self, x, s)
                k = (
                    fn_cache[dt]
                    if dt in fn_cache
                    else fn_cache.setdefault(dt, get("scalar", op, dt))
                )
                if k is None:
                    return _slow(self, x, s)
                n = x.size
                try:
                    o = cp_new(x.shape, dt)
                except oom as exc:
                    raise alloc_error(name, exc) from exc
                if n:
                    v = _VEC[dt] * BLOCK
                    go.p2is(k, (n + v - 1) // v, x, o, n, s, dt in _FLOATS)
                return o
            return _slow(self, x, s)

        def _slow(self, x, s):
            if fb_static is not None:
                return fb_static(x, s)
            return fallback(self, x, s)

        run.__name__ = op
        return run

    for prefix in ("float_", "int_"):
        for op in fsrc.BINARY:
            name = prefix + op
            if name in table and not (prefix == "int_" and op in fsrc.FLOAT_ONLY):
                floats_only = prefix == "float_" and op in fsrc.FLOAT_ONLY
                out[name] = binary(name, op, table[name], floats_only)
        for op in fsrc.UNARY:
            name = prefix + op
            if op == "square" and prefix == "float_":
                out[name] = unary(name, op, _square)
            elif name in table and not (prefix == "int_" and op in fsrc.FLOAT_ONLY):
                out[name] = unary(name, op, table[name])
        for op in fsrc.SCALAR:
            name = prefix + op
            if name in table and not (prefix == "int_" and op in fsrc.FLOAT_ONLY):
                out[name] = scalar(name, op, table[name])
    if "relu" in table:
        out["relu"] = unary("relu", "relu", table["relu"])
    out["relu_backward"] = binary("relu_backward", "relu_backward", _relu_backward, True)
    # gelu and its backward: one kernel each (burn_gpu's expressions) in place of burn-tensor's
    # decompositions (5 and ~10 launches), which stay the fallback for what the kernels skip
    out["gelu"] = unary("gelu", "gelu", op_decl("gelu").default)
    gelu_bwd = op_decl("gelu_backward").default
    out["gelu_backward"] = binary("gelu_backward", "gelu_backward", gelu_bwd, True)
    out.update(reductions(cp, table, get, oom, alloc_error, go))
    return out


def _square(self, x):
    return self.float_mul(x, x)


def _relu_backward(self, output, grad):  # burn_tensor's default, for what the kernel skips
    return self.float_mask_fill(grad, self.float_lower_equal_elem(output, 0.0), 0.0)
