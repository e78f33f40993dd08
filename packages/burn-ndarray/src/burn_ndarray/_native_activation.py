"""Activation gradients on the native kernels: `relu_backward(output, grad)` in one pass.

Its default (ActivationOps) is two ops, a compare and a mask_fill, each a pass over the tensor
and, from 4 threads, each a Python-pool region; the kernel writes +0.0 where output <= 0 and the
gradient elsewhere, the default's bits. Shapes: output, grad [d...] (the same) -> [d...].
"""

from __future__ import annotations

import numpy as np

from . import _native_ops as _ops
from ._native_ops import F32


def same_shape(lib, kname, prev, m, threads, grain):
    """A binary kernel on two same-shape, same-dtype, C-contiguous operands (e.g. relu's
    gradient, whose default is two ops: a compare and a mask_fill); else `prev`."""
    ks = _ops._kernels(lib, "bin_" + kname)
    for k in ks.values():  # not in `_native._declare`'s list: its signature here
        k.argtypes, k.restype = _ops._kernels(lib, "bin_add")[F32].argtypes, None
    get = ks.get

    def op(x, y):
        dt = x.dtype
        k = get(dt)
        if k is None or x.size < m or y.dtype != dt or x.shape != y.shape:
            return prev(x, y)
        px, py = _ops._cptr(x), _ops._cptr(y)
        if not (px and py):
            return prev(x, y)
        out = np.empty(x.shape, dt)
        n = x.size
        k(px, py, _ops._ptr(out), 1, n, 0, 1, 0, 1, _ops._nt(threads, n, grain))
        return out

    return op
