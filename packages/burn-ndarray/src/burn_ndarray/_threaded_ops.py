"""Threaded variants of NdArray's ops, installed per backend instance when it has > 1 thread.

Each op keeps its single numpy call below `parallel_min` elements: the wrapper adds one size
check to the hot path (and runs under the same quiet floating-point state `_fp.quiet` gives the
plain op, in the same Python frame). Above it:

- elementwise ops (unary, binary with broadcasting, scalar) run in chunks (`_parallel.elementwise`);
- reductions split the kept axes, or add fixed-block partials (`_parallel.reduce_dim`/`reduce_all`);
- conv ops split the batch and pools/interpolation the batch x channel planes, each part with one
  BLAS thread (`_parallel.batch_map`); a 2-D matmul gets the backend's BLAS threads and a batched
  matmul of small matrices splits its batch.

Ops reached through these (softmax, activations, optimizer updates, conv gradients) inherit it.

Example:
    >>> from burn_ndarray import NdArray
    >>> import numpy as np
    >>> b = NdArray(num_threads=2, parallel_min=1)
    >>> b.float_add(np.ones(4, np.float32), np.ones(4, np.float32)).tolist()
    [2.0, 2.0, 2.0, 2.0]
"""

from __future__ import annotations

import numpy as np
from burn_tensor.array_api import sum_dtype
from burn_tensor.backend import mark_tier

from . import _fp, _parallel
from ._fp import needs_quiet
from ._ops_common import keep_dtype
from ._threads import GRAIN
from ._tiers import threaded_decide

# fmt: off
UNARY = [
    "exp", "log", "log1p", "sqrt", "cos", "sin", "tan", "cosh", "sinh", "tanh", "acos", "acosh",
    "asin", "asinh", "atan", "atanh", "round", "floor", "ceil", "trunc", "erf", "recip", "abs",
    "neg", "sign", "is_nan", "is_inf",
]
BINARY = [
    "add", "sub", "mul", "div", "remainder", "powf", "atan2", "hypot", "greater", "greater_equal",
    "lower", "lower_equal", "equal", "not_equal", "bitwise_and", "bitwise_or", "bitwise_xor",
]
# (x, scalar-or-dtype, ...): the size of x decides.
WITH_SCALARS = [
    "add_scalar", "sub_scalar", "mul_scalar", "div_scalar", "remainder_scalar", "powf_scalar",
    "powi_scalar", "equal_elem", "not_equal_elem", "greater_elem", "greater_equal_elem",
    "lower_elem", "lower_equal_elem", "clamp", "clamp_min", "clamp_max", "cast", "into_int",
    "into_float",
]
# fmt: on
# (x, mask, value): value is a tensor (mask_where) or a scalar (mask_fill).
MASKED = ("mask_where", "mask_fill")
REDUCE_DIM = {"sum_dim": np.add, "max_dim": np.maximum, "min_dim": np.minimum}
REDUCE_ALL = {"sum": np.add, "max": np.maximum, "min": np.minimum}
# Module ops split over the batch (conv) or over the n*c planes (pools, interpolation): which
# arguments are split, and whether part results are added (weight gradients).
CONV = {
    "conv2d": ((0,), "cat"),
    "conv_transpose2d": ((0,), "cat"),
    "conv2d_weight_backward": ((0, 2), "sum"),
    "conv_transpose2d_weight_backward": ((0, 2), "sum"),
    "conv_transpose2d_x_backward": ((1,), "cat"),
}
PLANES = {
    "avg_pool2d": (0,),
    "avg_pool2d_backward": (0, 1),
    "max_pool2d_with_indices": (0,),
    "max_pool2d_with_indices_backward": (0, 5, 6),
    "adaptive_avg_pool2d": (0,),
    "adaptive_avg_pool2d_backward": (0, 1),
    "interpolate": (0,),
    "interpolate_backward": (0, 1),
}


# Elementwise ops with many cycles per element (transcendentals, powers, fmod): they gain from
# threads on any machine. The others are memory-bound passes, split only from
# `MEMORY_BOUND_MIN_THREADS` threads on: on a 2-vCPU machine two half-size numpy calls on two
# threads measured 236 us for a [1024, 1024] float32 mul, one call 209 us (the vCPUs share one
# core's memory bandwidth, and waking a worker cost 20-90 us there), while 16 cores have the
# aggregate bandwidth (add 2^20: 513 us alone, 211 us on 8 threads).
COMPUTE_BOUND = {
    "exp", "log", "log1p", "cos", "sin", "tan", "cosh", "sinh", "tanh", "acos", "acosh", "asin",
    "asinh", "atan", "atanh", "erf", "powf", "powf_scalar", "atan2", "remainder",
    "remainder_scalar",
}  # fmt: skip
MEMORY_BOUND_MIN_THREADS = 4


def install(backend) -> None:
    """Set threaded ops as instance attributes of `backend` (before its kind views are built)."""
    threads, m = backend.num_threads, backend.parallel_min
    grain = max(1, min(m // 2, GRAIN))
    block = grain  # fixed reduction blocks: results do not depend on the thread count
    forced = backend.parallel_min_forced
    # Memory-bound ops keep their single numpy call (no wrapper at all) on few threads.
    cheap = forced or threads >= MEMORY_BOUND_MIN_THREADS
    cls = type(backend)
    ops = {}

    def add(name, make, short=None):
        if cheap or (short or name) in COMPUTE_BOUND:
            _add(ops, cls, backend, name, make)

    for kind in ("float_", "int_", "bool_"):
        for short in UNARY + WITH_SCALARS:
            add(kind + short, _unary(threads, m, grain), short)
        for short in BINARY + list(MASKED):
            add(kind + short, _binary(threads, m, grain), short)
    for short in BINARY[-3:] + [s + "_scalar" for s in BINARY[-3:]] + ["not"]:
        add("bitwise_" + short.removeprefix("bitwise_"), _unary(threads, m, grain))
    add("relu", _unary(threads, m, grain))
    for kind in ("float_", "int_"):
        for short, uf in REDUCE_DIM.items():
            add(kind + short, _reduce_dim(uf, threads, m, grain))
        for short, uf in REDUCE_ALL.items():
            add(kind + short, _reduce_all(uf, threads, m, block))
        for short, fn in (("argmax", np.argmax), ("argmin", np.argmin)):
            add(kind + short, _arg(fn, threads, m, grain, backend))
    add("float_mean", _mean(threads, m, block))
    add("float_mean_dim", _mean_dim(threads, m, grain))
    # Many cycles per element (GEMMs, windows): threaded whatever the thread count.
    _add(ops, cls, backend, "float_matmul", _matmul(threads, m))
    from . import _threaded_batch  # it imports this module's `_quiet_pair`

    for name, (split, combine) in CONV.items():
        _add(ops, cls, backend, name, _threaded_batch.conv(split, combine, threads, m, grain))
    for name, split in PLANES.items():
        _add(ops, cls, backend, name, _threaded_batch.planes(split, threads, m, grain))
    for name, fn in ops.items():
        tier = mark_tier(fn, "threaded", None, threaded_decide(m, threads))  # for explain
        object.__setattr__(backend, name, tier)


def _add(ops, cls, backend, name, make) -> None:
    raw = cls.__dict__.get(name)
    if raw is None:
        for base in cls.__mro__[1:]:
            if name in base.__dict__:
                raw = base.__dict__[name]
                break
    if raw is None:
        return
    fn = raw.__func__ if isinstance(raw, staticmethod) else raw
    fn = getattr(fn, "__wrapped__", fn)  # the numpy function under `_fp.quiet`
    if not isinstance(raw, staticmethod):
        fn = fn.__get__(backend)
    ops[name] = make(fn, needs_quiet(name) and _fp._STATE is not None)


def _quiet_pair(quiet: bool):
    """(set, reset, state) that silence numpy's floating-point errors, or no-ops."""
    if quiet:
        var, state = _fp._STATE
        return var.set, var.reset, state
    return (lambda s: None), (lambda t: None), None


def _unary(threads, m, grain):
    def make(fn, quiet):
        set_, reset, state = _quiet_pair(quiet)
        par = _parallel.elementwise

        def op(x, *args):
            token = set_(state)
            try:
                if x.size < m:
                    return fn(x, *args)
                return par(fn, threads, grain, x, *args)
            finally:
                reset(token)

        return op

    return make


def _binary(threads, m, grain):
    def make(fn, quiet):
        set_, reset, state = _quiet_pair(quiet)
        par = _parallel.elementwise

        def op(x, y, *args):
            token = set_(state)
            try:
                if x.size < m and y.size < m:
                    return fn(x, y, *args)
                return par(fn, threads, grain, x, y, *args)
            finally:
                reset(token)

        return op

    return make


def _reduce_dim(ufunc, threads, m, grain):
    def make(fn, quiet):
        set_, reset, state = _quiet_pair(quiet)

        def op(x, dim):
            token = set_(state)
            try:
                if x.size < m:
                    return fn(x, dim)
                dt = sum_dtype(x.dtype) if ufunc is np.add else None
                out = _parallel.reduce_dim(ufunc, x, dim, threads, grain, dt)
                return out if out.dtype == x.dtype else out.astype(x.dtype)
            finally:
                reset(token)

        return op

    return make


def _reduce_all(ufunc, threads, m, block):
    def make(fn, quiet):
        set_, reset, state = _quiet_pair(quiet)

        def op(x):
            token = set_(state)
            try:
                if x.size < m:
                    return fn(x)
                dt = sum_dtype(x.dtype) if ufunc is np.add else None
                out = _parallel.reduce_all(ufunc, x, threads, block, dt)
                return np.asarray(out, x.dtype).reshape(1)
            finally:
                reset(token)

        return op

    return make


def _mean(threads, m, block):
    def make(fn, quiet):
        set_, reset, state = _quiet_pair(quiet)

        def op(x):
            token = set_(state)
            try:
                if x.size < m:
                    return fn(x)
                s = _parallel.reduce_all(np.add, x, threads, block, sum_dtype(x.dtype))
                return np.asarray(s / x.size, x.dtype).reshape(1)
            finally:
                reset(token)

        return op

    return make


def _mean_dim(threads, m, grain):
    def make(fn, quiet):
        set_, reset, state = _quiet_pair(quiet)

        def op(x, dim):
            token = set_(state)
            try:
                if x.size < m or x.shape[dim] == 0:
                    return fn(x, dim)
                s = _parallel.reduce_dim(np.add, x, dim, threads, grain, sum_dtype(x.dtype))
                s = np.true_divide(s, x.shape[dim], out=s, casting="unsafe")
                return s if s.dtype == x.dtype else s.astype(x.dtype)
            finally:
                reset(token)

        return op

    return make


def _arg(argfn, threads, m, grain, backend):
    int_dtype = backend.int_dtype.np

    def kept(x, dim):
        return argfn(x, axis=dim, keepdims=True)

    def make(fn, quiet):
        def op(x, dim):
            if x.size < m:
                return fn(x, dim)
            out = _parallel.reduce_dim(kept, x, dim, threads, grain, out_dtype=np.intp)
            return out.astype(int_dtype)

        return op

    return make


def _matmul(threads, m):
    def make(fn, quiet):
        set_, reset, state = _quiet_pair(quiet)

        def op(x, y):
            token = set_(state)
            try:
                if x.size < m and y.size < m:
                    return fn(x, y)
                return keep_dtype(_parallel.matmul(x, y, threads), x, y)
            finally:
                reset(token)

        return op

    return make
