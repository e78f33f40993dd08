"""Reductions on the native kernels: sum/mean/max/min over all elements and along a dim,
argmax/argmin (see `_native_ops` for when they are installed).

Over all elements: fixed blocks of `RBLK` elements reduced with 16 lanes (float32 sums in
float64), the block partials combined in block order, so the result does not depend on the
thread count. Along a dim: rows reduced with the same lane code, or columns accumulated over the
rows in order, split over (outer, column block). argmax/argmin: the first index of the extreme,
the first NaN, as numpy.
"""

from __future__ import annotations

import numpy as np

from . import _native_ops as _ops
from ._native_ops import F64

RBLK = 16384


def _reduce_all(lib, kname, prev, m, threads, grain, mean, small=None):
    ks = _ops._kernels(lib, "red_" + kname)
    get = ks.get
    acc_f64 = kname == "sum"
    fn, set_, reset, state = small or (prev, None, None, None)

    def op(x):
        n = x.size
        if n < m or n == 0:
            if set_ is None:
                return fn(x)
            token = set_(state)
            try:
                return fn(x)
            finally:
                reset(token)
        dt = x.dtype
        k = get(dt)
        if k is None or not _ops._cptr(x):
            return prev(x)
        partials = np.empty((n + RBLK - 1) // RBLK, F64 if acc_f64 else dt)
        out = np.empty(1, dt)
        k(_ops._ptr(x), n, _ops._ptr(partials), _ops._ptr(out), _ops._nt(threads, n, grain))
        if mean:
            # the sum in float64, divided, then rounded once
            return np.asarray(_sum64(partials) / n, dt).reshape(1)
        return out

    return op


def _sum64(partials):
    total = 0.0
    for v in partials.tolist():
        total += v
    return total


def _collapse(x, dim):
    shape = x.shape
    outer = 1
    for s in shape[:dim]:
        outer *= s
    inner = 1
    for s in shape[dim + 1 :]:
        inner *= s
    return outer, shape[dim], inner


def _reduce_dim(lib, kname, prev, m, threads, grain, mean, small):
    ks = _ops._kernels(lib, "rdim_" + kname)
    get = ks.get
    whole = _reduce_all(lib, kname, prev, 1, threads, grain, mean)
    fn, set_, reset, state = small

    def op(x, dim):
        if x.size < m:
            if set_ is None:
                return fn(x, dim)
            token = set_(state)
            try:
                return fn(x, dim)
            finally:
                reset(token)
        dt = x.dtype
        k = get(dt)
        if k is None or x.shape[dim] == 0 or not _ops._cptr(x):
            return prev(x, dim)
        outer, r, inner = _collapse(x, dim)
        shape = list(x.shape)
        shape[dim] = 1
        if outer == 1 and inner == 1:  # one long row: the whole-tensor kernel's fixed blocks
            return whole(x).reshape(shape)
        out = np.empty(shape, dt)
        k(_ops._ptr(x), _ops._ptr(out), outer, r, inner, 1.0 / r if mean else 1.0,
          _ops._nt(threads, x.size, grain))  # fmt: skip
        return out

    return op


def _arg(lib, kname, prev, m, threads, grain, int_dtype, small):
    ks = _ops._kernels(lib, "arg_" + kname)
    get = ks.get
    fn, set_, reset, state = small

    def op(x, dim):
        if x.size < m:
            if set_ is None:
                return fn(x, dim)
            token = set_(state)
            try:
                return fn(x, dim)
            finally:
                reset(token)
        dt = x.dtype
        k = get(dt)
        if k is None or x.shape[dim] == 0 or not _ops._cptr(x):
            return prev(x, dim)
        outer, r, inner = _collapse(x, dim)
        shape = list(x.shape)
        shape[dim] = 1
        out = np.empty(shape, np.int64)
        k(_ops._ptr(x), _ops._ptr(out), outer, r, inner, _ops._nt(threads, x.size, grain))
        return out.astype(int_dtype, copy=False)

    return op
