"""Kind-agnostic array implementations, installed as float_*/int_*/bool_* ops.

`array_ops(xp)` holds the ops whose code is right for any numpy-compatible namespace (numpy here,
cupy in burn_cuda, which imports it); the rest of `COMMON` is numpy-only (host copies, read-only
views, a bit-level select).

Invariant: no op ever writes into an input array (tensors are immutable values); ops that assign
copy first. Arrays handed out through `into_data` are read-only views.
"""

from __future__ import annotations

import numpy as np
from burn_tensor import TensorData
from burn_tensor.ops import numpy_slice


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


def from_data(self, data, device):
    # Copy so later writes to the caller's numpy array cannot change the tensor.
    return np.array(data.array, copy=True)


def into_data(self, x):
    view = x.view() if isinstance(x, np.ndarray) else np.asarray(x)
    view.flags.writeable = False
    return TensorData(view)


def to_device(self, x, device):
    return x


# Same-width unsigned ints of the float dtypes, for `mask_fill`'s branch-free select on bits.
_BITS = {
    np.dtype(np.float32): np.uint32,
    np.dtype(np.float64): np.uint64,
    np.dtype(np.float16): np.uint16,
}


def mask_fill(self, x, mask, value):
    v = np.asarray(value, dtype=x.dtype)
    ut = _BITS.get(x.dtype)
    if ut is None or mask.dtype != np.bool_ or x.size < 4096:
        return np.where(mask, v, x)
    # np.where branches per element: a random mask (relu's backward, dropout) mispredicts half
    # the time and runs ~10x slower than this select on the bit patterns, which gives the same
    # bits (value where mask, else x). keep: all ones where x is kept, 0 where it is filled.
    keep = np.subtract(mask.astype(ut), ut(1))
    out = np.bitwise_and(x.view(ut), keep)
    vb = v.view(ut)
    if vb:
        out |= np.bitwise_and(vb, np.invert(keep))
    return out.view(x.dtype)


COMMON = {
    **array_ops(np),
    "from_data": from_data,
    "into_data": into_data,
    "to_device": to_device,
    "mask_fill": mask_fill,
}
