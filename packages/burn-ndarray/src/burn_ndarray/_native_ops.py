"""NdArray ops on the native kernels (`_native`): one ctypes call per op, OpenMP inside.

Installed per backend instance (after the threaded ops, which stay the fallback) when the
native library loads. Each op keeps the previous implementation for what it does not cover:
tensors under `native_min` elements (default `NATIVE_MIN`; the 16-element latency path is one
size check longer), dtypes other than float32/float64, operands whose layout does not collapse
to a contiguous [m, n] with row/column/scalar broadcasting.

Which implementation runs depends only on sizes, dtypes and layouts, never on the thread count,
and the kernels split fixed blocks: results are bitwise identical for every `num_threads`.
(Transcendentals are glibc's libmvec, not numpy's SIMD code: they differ from numpy in the last
bits, within a few ulp.)

Threads per call: `min(num_threads, elements // grain)`, `grain` = `GRAIN_COMPUTE` for
transcendentals, `GRAIN_MEMORY` for memory-bound passes (add, neg, sums, ...); memory-bound ops
use the whole budget from `NATIVE_MEMORY_MIN_THREADS` (2) threads on, as torch does; argmax and
argmin keep numpy's loop below `ARG_NUMPY_BELOW` (4) threads.
"""

from __future__ import annotations

import os

import numpy as np

from burn_tensor.backend import mark_tier

from . import _fp, _load, _native
from ._fp import needs_quiet
from ._tiers import native_decide
from ._threaded_ops import COMPUTE_BOUND

NATIVE_MIN = 1 << 14
# Memory-bound kernels take every thread of the budget from this many on. On the 2-core EPYC
# box ([1024, 1024] float32, quiet, 3 processes, us) two threads beat one thread / numpy's loop:
# add 110-127 vs 174-188, mul 71-90 vs 130-154, sqrt 112-122 vs 218-227, sum 60-77 vs 107-116,
# clamp 114-123 vs 183-284 (torch on 2 threads: 80-90, 70-83, 338-440, 48-52, 73-75). The
# inputs fit its 32 MB L3, whose bandwidth grows with cores. (An earlier box, measured loaded,
# had shown the opposite; the README's "Native kernels", Sizes, has both.)
NATIVE_MEMORY_MIN_THREADS = 2
# argmax/argmin along a dim: numpy's loop beat two threads of the kernel there (105-143 vs
# 175-204 us), so it stays below this many threads.
ARG_NUMPY_BELOW = 4
GRAIN_MEMORY = 1 << 15
GRAIN_COMPUTE = 1 << 12
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
SUFFIX = {F32: "f32", F64: "f64"}

# backend op (without "float_") -> kernel name in kernels.c
UNARY = {
    "exp": "exp", "log": "log", "log1p": "log1p", "sqrt": "sqrt", "sin": "sin", "cos": "cos",
    "tan": "tan", "tanh": "tanh", "sinh": "sinh", "cosh": "cosh", "atan": "atan", "asin": "asin",
    "acos": "acos", "erf": "erf", "abs": "abs", "neg": "neg", "recip": "recip",
}  # fmt: skip
BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "powf": "pow"}
SCALAR = {
    "add_scalar": "add", "sub_scalar": "sub", "mul_scalar": "mul", "div_scalar": "div",
    "powf_scalar": "pow",
}  # fmt: skip
REDUCE_ALL = ("sum", "max", "min")
REDUCE_DIM = ("sum", "max", "min")
# Exact memory-bound ops that keep numpy's own loop on one thread (a budget of 1, or argmax /
# argmin below ARG_NUMPY_BELOW threads): there numpy's loops are as fast or faster than one
# thread of the kernels (2-core AVX2 box, [1024, 1024] float32, native / numpy: argmax 2.4x,
# max 1.45x, max_dim 1.3x, neg and mul_scalar 1.1x, same-shape add 1.1x), and both give the same
# bits (IEEE add/sub/mul/div, comparisons), so results still never depend on the thread count.
# Broadcasts, sums, sqrt and recip stay native there: one thread of the kernels beats numpy.
NUMPY_ON_ONE_THREAD = frozenset(
    {"float_neg", "float_abs", "float_max", "float_min", "float_max_dim", "float_min_dim",
     "float_argmax", "float_argmin", "float_clamp", "float_clamp_min", "float_clamp_max"}
    | {f"float_{s}_scalar" for s in ("add", "sub", "mul", "div")}
)  # fmt: skip
ARG_OPS = frozenset({"float_argmax", "float_argmin"})
#: same-shape operands of these binary ops take numpy's loop on one thread (see above)
SAME_SHAPE_NUMPY_ON_ONE_THREAD = frozenset({"add", "sub", "mul", "div"})


def default_native_min() -> int:
    value = os.environ.get("BURN_NDARRAY_NATIVE_MIN", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else NATIVE_MIN


# ndarray -> its data address handed to the kernels; _cptr: 0 unless C-contiguous
# (`_native.addr_fns`: a compiled field read, else through `arr.ctypes` / `arr.flags`).
_ptr, _cptr = _native._ctypes_addr, _native._ctypes_caddr


def install(backend) -> bool:
    """Native variants of the covered float ops as instance attributes of `backend`."""
    global _ptr, _cptr
    lib = _native.lib()
    if lib is None:
        return False
    _ptr, _cptr = _native.addr_fns()
    budget = backend.num_threads
    forced = backend.parallel_min_forced
    m = backend.parallel_min if forced else default_native_min()
    # Memory-bound passes take the budget from NATIVE_MEMORY_MIN_THREADS threads on. On one
    # thread they still run native where the kernels beat numpy's broadcast, sqrt, reciprocal
    # and sum-along-a-dim loops 1.6-2x (README); NUMPY_ON_ONE_THREAD keeps numpy's loop where
    # they do not.
    memory_threads = budget if forced or budget >= NATIVE_MEMORY_MIN_THREADS else 1
    numpy_low = not forced and budget < NATIVE_MEMORY_MIN_THREADS  # NUMPY_ON_ONE_THREAD applies
    numpy_arg = not forced and budget < ARG_NUMPY_BELOW

    def threads_for(short):
        if short in COMPUTE_BOUND or short in ("pow",):
            return budget, GRAIN_COMPUTE, True
        return memory_threads, GRAIN_MEMORY, False

    def prev(name):
        return getattr(backend, name)

    ops = {}

    for short, k in UNARY.items():
        name = "float_" + short
        p = prev(name)
        ops[name] = _unary(lib, k, p, m, *threads_for(short), _small(backend, name, p))
    p = prev("relu")
    ops["relu"] = _unary(lib, "relu", p, m, *threads_for("relu"), _small(backend, "relu", p))
    from . import _native_activation, _native_binary  # they import this module's helpers

    _native_activation.install(backend, lib, m, ops, threads_for)
    for short, k in BINARY.items():
        name = "float_" + short
        p = prev(name)
        t, g, c = threads_for(short)
        same_numpy = numpy_low and short in SAME_SHAPE_NUMPY_ON_ONE_THREAD
        small = _small(backend, name, p)
        ops[name] = _native_binary.binary(lib, k, p, m, t, g, c, small, same_numpy)
    for short, k in SCALAR.items():
        name = "float_" + short
        p = prev(name)
        ops[name] = _scalar(lib, k, p, m, *threads_for(short), _small(backend, name, p))
    t, g, _ = threads_for("clamp")
    ops["float_clamp"] = _clamp(lib, prev("float_clamp"), m, t, g)
    # np.maximum / np.minimum with a scalar, bit for bit (signed zeros, NaN)
    for name, k in (("float_clamp_min", "maximum"), ("float_clamp_max", "minimum")):
        p = prev(name)
        ops[name] = _scalar(lib, k, p, m, t, g, False, _small(backend, name, p))
    from ._native_reduce import _arg, _reduce_all, _reduce_dim

    t, g, _ = threads_for("sum")
    for short in REDUCE_ALL:
        name = "float_" + short
        p = prev(name)
        ops[name] = _reduce_all(lib, short, p, m, t, g, False, _small(backend, name, p))
    p = prev("float_mean")
    small = _small(backend, "float_mean", p)
    ops["float_mean"] = _reduce_all(lib, "sum", p, m, t, g, True, small)
    for short in REDUCE_DIM:
        name = f"float_{short}_dim"
        p = prev(name)
        ops[name] = _reduce_dim(lib, short, p, m, t, g, False, _small(backend, name, p))
    p = prev("float_mean_dim")
    small = _small(backend, "float_mean_dim", p)
    ops["float_mean_dim"] = _reduce_dim(lib, "sum", p, m, t, g, True, small)
    int_dtype = backend.int_dtype.np
    for short in ("max", "min"):
        name = f"float_arg{short}"
        p = prev(name)
        ops[name] = _arg(lib, short, p, m, t, g, int_dtype, _small(backend, name, p))
    from . import (
        _native_attention,
        _native_conv,
        _native_dwconv,
        _native_gemm,
        _native_nn,
        _native_optim,
        _native_pool,
        _native_rnn,
        _native_softmax,
        _native_volume,
    )

    _native_optim.install(backend, lib, memory_threads, ops)
    _native_pool.install(backend, lib, m, ops)
    _native_conv.install(backend, lib, m, ops)
    _native_dwconv.install(backend, lib, m, ops)
    _native_softmax.install(backend, lib, m, ops)
    _native_nn.install(backend, lib, m, ops)
    _native_gemm.install(backend, lib, m, ops)
    _native_attention.install(backend, lib, m, ops)
    _native_volume.install(backend, lib, m, ops)
    _native_rnn.install(backend, lib, m, ops)
    for name in NUMPY_ON_ONE_THREAD if numpy_low else ARG_OPS if numpy_arg else ():
        ops.pop(name, None)
    for name, fn in ops.items():
        below = getattr(backend, name)  # what the op was before: the threaded tier or the class's
        tier = mark_tier(fn, "native", below, native_decide(m, below))  # for explain
        object.__setattr__(backend, name, tier)
    return True



# libgomp's thread pool does not survive fork(): a child that starts a parallel region hangs.
# Forked children (data-loader workers) run the kernels on their calling thread.
_FORKED = [False]


def _after_fork() -> None:
    _FORKED[0] = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def _nt(threads: int, n: int, grain: int) -> int:
    """OpenMP threads for n elements: one per `grain`, up to the budget (1 in a forked child)."""
    if _FORKED[0]:
        return 1
    return max(1, min(_load.threads_now(threads), n // grain))


#: multiply-adds under which a GEMM-like call (native GEMM, attention) runs on one thread:
#: waking the OpenMP team costs 20-90 us, more when another process holds the cores, and a
#: cached generation step's calls (4 rows through a linear, one query row per head) are ~1M:
#: ~100 us of work. On the 2-core box beside another job its attention took 2.3 ms a call on
#: 2 threads; generation with the cache went from 4.6x to 10x faster than without (session 19).
MIN_THREADED_MACS = 1 << 21


def team(threads: int, tasks: int, macs: int) -> int:
    """OpenMP threads for a call of `tasks` tasks and `macs` multiply-adds: 1 under
    `MIN_THREADED_MACS` or in a forked child, else the budget capped by the tasks and the free
    cores. (The native kernels split work by shapes only: results never depend on it.)

    Example:
        >>> team(2, 32, 4 * 8 * 264 * 128)  # a cached generation step's attention
        1
    """
    if _FORKED[0] or macs < MIN_THREADED_MACS:
        return 1
    return max(1, min(_load.threads_now(threads), tasks))


def _raw(backend, name):
    """(numpy function, whether it runs quiet) of op `name` as the class defines it: the small
    path calls it in the wrapper's own frame, as `_threaded_ops` does, so wrapping adds no
    Python frame to the 16-element latency path."""
    cls = type(backend)
    for klass in cls.__mro__:
        if name in klass.__dict__:
            raw = klass.__dict__[name]
            break
    else:
        return None, False
    fn = raw.__func__ if isinstance(raw, staticmethod) else raw
    fn = getattr(fn, "__wrapped__", fn)  # the numpy function under `_fp.quiet`
    if not isinstance(raw, staticmethod):
        fn = fn.__get__(backend)
    return fn, needs_quiet(name) and _fp._STATE is not None


def _small(backend, name, prev):
    """The small-size path of op `name`: (fn, set, reset, state); quiet state only if needed."""
    fn, quiet = _raw(backend, name)
    if fn is None:
        return prev, None, None, None
    if quiet:
        var, state = _fp._STATE
        return fn, var.set, var.reset, state
    return fn, None, None, None


def _kernels(lib, name):
    return {F32: getattr(lib, f"{name}_f32"), F64: getattr(lib, f"{name}_f64")}


def _unary(lib, kname, prev, m, threads, grain, compute, small):
    ks = _kernels(lib, "un_" + kname)
    get = ks.get
    fn, set_, reset, state = small

    def large(x):
        k = get(x.dtype)
        if k is None:
            return prev(x)
        px = _cptr(x)
        if not px:
            if not compute:  # exact ops: numpy's strided loop gives the same bits
                return prev(x)
            x = np.ascontiguousarray(x)  # the same bits as for a contiguous input
            px = _ptr(x)
        out = np.empty(x.shape, x.dtype)
        n = x.size
        k(px, _ptr(out), n, _nt(threads, n, grain))
        return out

    # One closure per case, each a single-argument function (every op of UNARY and relu takes
    # one tensor): the 16-element path is the size check and the call, ~0.1 us less than one
    # closure with `*args` and a branch on the quiet state (2-core box, float_exp on 16 floats).
    if set_ is None:

        def op(x):
            if x.size < m:
                return fn(x)
            return large(x)

        return op

    def op_quiet(x):
        if x.size < m:
            token = set_(state)
            try:
                return fn(x)
            finally:
                reset(token)
        return large(x)

    return op_quiet


INF = float("inf")


def _scalar(lib, kname, prev, m, threads, grain, compute, small):
    ks = _kernels(lib, "bin_" + kname)
    get = ks.get
    # x ** 2 as x * x (the MSE loss's square): the correctly rounded square, numpy's result
    # for the arrays under `m`, where libmvec's SIMD powf missed it for 2.7% of float32 normal
    # samples by an ulp, at ~10 ns an element (2.6 ms for a [4, 128, 512] loss on one core)
    square = _kernels(lib, "bin_mul").get if kname == "pow" else None
    limit = {F32: float(np.finfo(np.float32).max), F64: float(np.finfo(np.float64).max)}
    fn, set_, reset, state = small

    def op(x, s):
        if x.size < m:
            if set_ is None:
                return fn(x, s)
            token = set_(state)
            try:
                return fn(x, s)
            finally:
                reset(token)
        dt = x.dtype
        k = get(dt)
        if k is None or isinstance(s, np.ndarray):
            return prev(x, s)
        px = _cptr(x)
        if not px:
            if not compute:
                return prev(x, s)
            x = np.ascontiguousarray(x)
            px = _ptr(x)
        try:
            big = abs(s) > limit[dt] and abs(s) != INF
        except TypeError:
            return prev(x, s)
        if big:  # the cast to the dtype overflows: numpy's path, with its quiet flags
            return prev(x, s)
        out = np.empty(x.shape, dt)
        n = x.size
        if square is not None and s == 2:
            square(dt)(px, px, _ptr(out), 1, n, 0, 1, 0, 1, _nt(threads, n, GRAIN_MEMORY))
            return out
        sv = np.array([s], dt)
        k(px, _ptr(sv), _ptr(out), 1, n, 0, 1, 0, 0, _nt(threads, n, grain))
        return out

    return op


def _clamp(lib, prev, m, threads, grain):
    """np.clip(x, lo, hi) bit for bit: x < lo -> lo, x > hi -> hi, NaN stays."""
    ks = _kernels(lib, "clamp")
    get = ks.get

    def op(x, *bounds):
        if x.size < m:
            return prev(x, *bounds)
        dt = x.dtype
        k = get(dt)
        px = _cptr(x)
        if k is None or not px:
            return prev(x, *bounds)
        with np.errstate(all="ignore"):
            lo, hi = (float(v) for v in np.array(bounds, dt))
        out = np.empty(x.shape, dt)
        n = x.size
        k(px, _ptr(out), n, lo, hi, _nt(threads, n, grain))
        return out

    return op
