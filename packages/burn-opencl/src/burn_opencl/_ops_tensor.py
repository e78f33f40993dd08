"""Kind-agnostic ops (data movement, views, assignment, masks), installed as float_/int_/bool_*.

Views never copy; ops that assign (`slice_assign`, `cat`) write only into a buffer they just
allocated, so no other tensor sees a write.
"""

from __future__ import annotations

import numpy as np
from burn_tensor import TensorData

from . import _ew
from ._array import ClArray, broadcast_shape


def from_data(self, data, device):
    return ClArray.from_numpy(self._rt(device), np.asarray(data.array))


def into_data(self, x):
    x = _ew.contiguous(x)
    out = np.empty(x.shape, x.dtype)
    x.rt.read(x.buf, out, x.offset * x.dtype.itemsize)
    return TensorData(out)


def empty(self, shape, device, dtype):
    return ClArray.empty(self._rt(device), tuple(shape), dtype.np)


def _np(dtype):
    # The Bool family's defaults pass dtype=None.
    return _ew.BOOL if dtype is None else dtype.np


def zeros(self, shape, device, dtype=None):
    return _ew.full(self._rt(device), shape, 0, _np(dtype))


def ones(self, shape, device, dtype=None):
    return _ew.full(self._rt(device), shape, 1, _np(dtype))


def full(self, shape, value, device, dtype=None):
    return _ew.full(self._rt(device), shape, value, _np(dtype))


def to_device(self, x, device):
    rt = self._rt(device)
    if x.rt is rt:
        return x
    host = into_data(self, x).array
    return ClArray.from_numpy(rt, host)


def reshape(self, x, shape):
    shape = tuple(shape)
    if shape == x.shape:
        return x
    v = x.reshape_view(shape)
    return v if v is not None else _ew.contiguous(x).reshape_view(shape)


def swap_dims(self, x, a, b):
    return x.swap_dims(a, b)


def permute(self, x, axes):
    return x.permute(axes)


def flip(self, x, axes):
    return x.flip(axes)


def expand(self, x, shape):
    return x.expand(tuple(shape))


def slice_(self, x, slices):
    return x.slice(slices)


def slice_assign(self, x, slices, value):
    if value.dtype != x.dtype:  # converted, as NdArray does: the copy kernel moves raw elements
        value = _ew.cast(value, x.dtype)
    out = _ew.run("copy", x.dtype, x.dtype, x.shape, [x])
    _ew.write(out.slice(slices), value)
    return out


def mask_where(self, x, mask, value):
    shape = broadcast_shape((x.shape, mask.shape, value.shape))
    if value.dtype != x.dtype:
        value = _ew.cast(value, x.dtype)
    return _ew.run("mask_where", x.dtype, x.dtype, shape, [x, mask, value])


def mask_fill(self, x, mask, value):
    shape = broadcast_shape((x.shape, mask.shape))
    return _ew.run("mask_fill", x.dtype, x.dtype, shape, [x, mask], (value,))


def equal(self, x, y):
    return _ew.binary("equal", x, y, _ew.BOOL)


def not_equal(self, x, y):
    return _ew.binary("not_equal", x, y, _ew.BOOL)


def equal_elem(self, x, s):
    return _ew.scalar("equal_elem", x, s, out_dtype=_ew.BOOL)


def not_equal_elem(self, x, s):
    return _ew.scalar("not_equal_elem", x, s, out_dtype=_ew.BOOL)


def cat(self, tensors, dim):
    first = tensors[0]
    shape = list(first.shape)
    shape[dim] = sum(t.shape[dim] for t in tensors)
    out = ClArray.empty(first.rt, tuple(shape), first.dtype)
    start = 0
    for t in tensors:
        n = t.shape[dim]
        sl = [slice(0, s, 1) for s in shape]
        sl[dim] = slice(start, start + n, 1)
        _ew.write(out.slice(sl), t if t.dtype == out.dtype else _ew.cast(t, out.dtype))
        start += n
    return out


def repeat_dim(self, x, dim, times):
    shape = list(x.shape)
    y = x.reshape_view(tuple(shape[:dim] + [1] + shape[dim:])) or reshape(
        self, x, tuple(shape[:dim] + [1] + shape[dim:])
    )
    y = y.expand(tuple(shape[:dim] + [times] + shape[dim:]))
    out = _ew.contiguous(y)
    return out.reshape_view(tuple(shape[:dim] + [times * shape[dim]] + shape[dim + 1 :]))


COMMON = {
    "from_data": from_data,
    "into_data": into_data,
    "empty": empty,
    "zeros": zeros,
    "ones": ones,
    "full": full,
    "to_device": to_device,
    "reshape": reshape,
    "swap_dims": swap_dims,
    "permute": permute,
    "flip": flip,
    "expand": expand,
    "slice": slice_,
    "slice_assign": slice_assign,
    "mask_where": mask_where,
    "mask_fill": mask_fill,
    "equal": equal,
    "not_equal": not_equal,
    "equal_elem": equal_elem,
    "not_equal_elem": not_equal_elem,
    "cat": cat,
    "repeat_dim": repeat_dim,
}
