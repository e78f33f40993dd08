"""`array_ops(xp)`: creation, layout, slicing, gather/select, where, cat and repeat over an array
namespace, as the float_*/int_*/bool_* ops of a backend (without the prefix).

Invariant: no op ever writes into an input array (tensors are immutable values); ops that assign
copy first.
"""

from __future__ import annotations

import numpy as np

from ..ops import numpy_slice


def array_ops(xp) -> dict:
    """Creation, layout, slicing, gather/select, where, cat and repeat over namespace `xp`.

    Closures over `xp` cost no more per call than module globals (one cell load), so NdArray's
    small-tensor path is unchanged.

    Example:
        >>> ops = array_ops(np)
        >>> ops["permute"](None, np.zeros((2, 3)), (1, 0)).shape
        (3, 2)
    """

    def empty(self, shape, device, dtype):
        return xp.empty(shape, dtype.np)

    def zeros(self, shape, device, dtype):
        return xp.zeros(shape, dtype.np)

    def ones(self, shape, device, dtype):
        return xp.ones(shape, dtype.np)

    def full(self, shape, value, device, dtype):
        return xp.full(shape, value, dtype.np)

    def reshape(self, x, shape):
        return x.reshape(shape)

    def swap_dims(self, x, a, b):
        return x.swapaxes(a, b)

    def permute(self, x, axes):
        return x.transpose(axes)

    def flip(self, x, axes):
        return xp.flip(x, axes)

    def expand(self, x, shape):
        return xp.broadcast_to(x, shape)

    def slice_(self, x, slices):
        return x[tuple(numpy_slice(s) for s in slices)]

    def slice_assign(self, x, slices, value):
        out = x.copy()
        out[tuple(numpy_slice(s) for s in slices)] = value
        return out

    def gather(self, dim, x, indices):
        return xp.take_along_axis(x, indices.astype(np.intp, copy=False), axis=dim)

    def select(self, x, dim, indices):
        return xp.take(x, indices.astype(np.intp, copy=False), axis=dim)

    def mask_where(self, x, mask, value):
        return xp.where(mask, value, x)

    def equal(self, x, y):
        return xp.equal(x, y)

    def cat(self, tensors, dim):
        return xp.concatenate(tensors, axis=dim)

    def repeat_dim(self, x, dim, times):
        return xp.tile(x, tuple(times if d == dim else 1 for d in range(x.ndim)))

    return {
        "empty": empty,
        "zeros": zeros,
        "ones": ones,
        "full": full,
        "reshape": reshape,
        "swap_dims": swap_dims,
        "permute": permute,
        "flip": flip,
        "expand": expand,
        "slice": slice_,
        "slice_assign": slice_assign,
        "gather": gather,
        "select": select,
        "mask_where": mask_where,
        "equal": equal,
        "cat": cat,
        "repeat_dim": repeat_dim,
    }
