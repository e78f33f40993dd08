"""Kind-agnostic array implementations, listed as float_*/int_*/bool_* ops in `_ops_table.OPS`.

`COMMON` is `burn_tensor.array_api.array_ops(np)` (the ops whose code is right for any
numpy-compatible namespace, shared with burn_cuda) plus the numpy-only ones here: host copies,
read-only views, a bit-level select. `matmul` keeps its inputs' dtype.

Invariant: no op ever writes into an input array (tensors are immutable values); ops that assign
copy first. Arrays handed out through `into_data` are read-only views.
"""

from __future__ import annotations

import numpy as np
from burn_tensor import TensorData
from burn_tensor.array_api import array_ops


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


def matmul(x, y):
    """`np.matmul` in its inputs' dtype (see `keep_dtype`)."""
    return keep_dtype(np.matmul(x, y), x, y)


def keep_dtype(r, x, y):
    """A matmul result in its inputs' dtype: ml_dtypes' bfloat16 matmul returns float32 (it
    accumulates in f32), so it is rounded once back to bfloat16, as a GPU GEMM with f32
    accumulation does."""
    return r.astype(x.dtype) if x.dtype == y.dtype and r.dtype != x.dtype else r
