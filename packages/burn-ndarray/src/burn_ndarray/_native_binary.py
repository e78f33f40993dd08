"""Binary ops on the native kernels (`bin_*` in kernels.c), with numpy's broadcasting.

Operands whose broadcast collapses to a C-contiguous [m, n] iteration with row/column/scalar
strides (`_strides2d`) run as one kernel call; the layout plan is remembered per (shapes,
strides, dtype). Split from `_native_ops`, which installs these ops.
"""

from __future__ import annotations

import numpy as np

from . import _native_ops as _ops


def _strides2d(shape, x, y):
    """(m, n, ra, ca, rb, cb): the broadcast of x and y over `shape` as a C-contiguous [m, n]
    iteration with column strides 0 or 1 element, or None."""
    nd = len(shape)
    groups = []  # [size, stride_x, stride_y] per merged dim, outermost first
    for i in range(nd):
        s = shape[i]
        if s == 1:
            continue
        st = []
        for a in (x, y):
            j = i - (nd - a.ndim)
            st.append(0 if j < 0 or a.shape[j] == 1 else a.strides[j] // a.itemsize)
        if groups:
            g = groups[-1]
            if g[1] == st[0] * s and g[2] == st[1] * s:
                g[0] *= s
                g[1], g[2] = st
                continue
        groups.append([s, st[0], st[1]])
    if not groups:
        return 1, 1, 0, 0, 0, 0
    if len(groups) > 2:
        return None
    n, ca, cb = groups[-1]
    if ca not in (0, 1) or cb not in (0, 1):
        return None
    if len(groups) == 1:
        return 1, n, 0, ca, 0, cb
    mm, ra, rb = groups[0]
    return mm, n, ra, ca, rb, cb


PLAN_CACHE = 256  # broadcast plans kept per op (a model uses a handful of shape pairs)


def _plan(x, y):
    """(broadcast shape, `_strides2d` plan or None), or (None, None) if they do not broadcast."""
    try:
        shape = np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return None, None
    return shape, _strides2d(shape, x, y)


def binary(lib, kname, prev, m, threads, grain, compute, small, same_numpy=False):
    """A binary op on the `bin_<kname>` kernels; `prev` below `m` elements and for what they
    do not cover. `same_numpy`: same-shape operands take `prev` (numpy's loop: the same bits)."""
    ks = _ops._kernels(lib, "bin_" + kname)
    # bound once: `install` sets the address helpers before it builds the ops
    _ptr, _cptr, _nt = _ops._ptr, _ops._cptr, _ops._nt
    get = ks.get
    fn, set_, reset, state = small
    # (shapes, strides, dtype) -> (shape, plan): np.broadcast_shapes and the stride walk are
    # ~10 us of Python per call, as much as a row-broadcast add of 2^20 elements on 16 cores.
    plans: dict = {}
    plans_get = plans.get

    def large(x, y):
        dt = x.dtype
        k = get(dt)
        if k is None or y.dtype != dt:
            return prev(x, y)
        if x.shape == y.shape:
            if same_numpy:
                return prev(x, y)
            px, py = _cptr(x), _cptr(y)
            if px and py:
                out = np.empty(x.shape, dt)
                n = x.size
                k(px, py, _ptr(out), 1, n, 0, 1, 0, 1, _nt(threads, n, grain))
                return out
        key = (x.shape, x.strides, y.shape, y.strides, dt)
        hit = plans_get(key)
        if hit is None:
            hit = _plan(x, y)
            if len(plans) >= PLAN_CACHE:
                plans.clear()
            plans[key] = hit
        shape, plan = hit
        if shape is None:  # shapes that do not broadcast: the previous op raises
            return prev(x, y)
        if plan is None:
            if not compute:  # exact ops: numpy's loops give the same bits
                return prev(x, y)
            x = np.ascontiguousarray(np.broadcast_to(x, shape))
            y = np.ascontiguousarray(np.broadcast_to(y, shape))
            plan = 1, x.size, 0, 1, 0, 1
        out = np.empty(shape, dt)
        n = out.size
        if n == 0:
            return out
        mm, nn, ra, ca, rb, cb = plan
        k(_ptr(x), _ptr(y), _ptr(out), mm, nn, ra, ca, rb, cb,
          _nt(threads, n, grain))  # fmt: skip
        return out

    # one closure per quiet state, as in `_unary` (the 16-element path is two size checks)
    if set_ is None:

        def op(x, y):
            if x.size < m and y.size < m:
                return fn(x, y)
            return large(x, y)

        return op

    def op_quiet(x, y):
        if x.size < m and y.size < m:
            token = set_(state)
            try:
                return fn(x, y)
            finally:
                reset(token)
        return large(x, y)

    return op_quiet
