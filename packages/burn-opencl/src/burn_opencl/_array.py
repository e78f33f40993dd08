"""`ClArray`: the tensor primitive of the OpenCL backend -- a buffer plus a strided view of it.

Views (permute, swap_dims, flip, slice, expand, reshape of a contiguous array) share the buffer
and only change shape/strides/offset: nothing mutates a buffer once an op has written it, so
sharing is safe (tensors are immutable values). Strides and offset count elements; a stride may
be 0 (expanded dims) or negative (flipped dims).
"""

from __future__ import annotations

import math

import numpy as np


def c_strides(shape) -> tuple[int, ...]:
    out = []
    acc = 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return tuple(reversed(out))


class ClArray:
    """A strided view of a device buffer. `.shape` and `.dtype` (numpy) are the backend contract.

    Example:
        >>> x = ClArray.from_numpy(rt, np.arange(6.0).reshape(2, 3))
        >>> x.permute((1, 0)).shape
        (3, 2)
    """

    __slots__ = ("__weakref__", "block", "buf", "dtype", "offset", "rt", "shape", "strides")

    def __init__(self, rt, block, shape, dtype, strides=None, offset: int = 0):
        self.rt = rt
        self.block = block  # the pool's owner of the buffer: shared by every view
        self.buf = block.buf
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.strides = c_strides(self.shape) if strides is None else tuple(strides)
        self.offset = int(offset)

    # -- construction ------------------------------------------------------------------------------
    @staticmethod
    def empty(rt, shape, dtype) -> ClArray:
        dtype = np.dtype(dtype)
        if dtype.kind == "f":
            rt.check_dtype(dtype)
        n = math.prod(shape)
        if n >= 2**31:
            raise ValueError(f"OpenCl: tensors of 2^31 elements or more are not supported: {shape}")
        return ClArray(rt, rt.alloc(n * dtype.itemsize), shape, dtype)

    @staticmethod
    def from_numpy(rt, arr: np.ndarray) -> ClArray:
        arr = np.ascontiguousarray(arr)
        if arr.dtype.kind == "f":
            rt.check_dtype(arr.dtype)
        return ClArray(rt, rt.upload(arr), arr.shape, arr.dtype)

    # -- properties --------------------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def is_contiguous(self) -> bool:
        """C-contiguous from `offset` (size-1 dims may have any stride)."""
        acc = 1
        for n, s in zip(reversed(self.shape), reversed(self.strides)):
            if n != 1 and s != acc:
                return False
            acc *= n
        return True

    def __repr__(self) -> str:
        return f"ClArray(shape={list(self.shape)}, dtype={self.dtype}, strides={self.strides})"

    # -- views -----------------------------------------------------------------------------------
    def view(self, shape, strides, offset) -> ClArray:
        return ClArray(self.rt, self.block, shape, self.dtype, strides, offset)

    def permute(self, axes) -> ClArray:
        return self.view(
            [self.shape[a] for a in axes], [self.strides[a] for a in axes], self.offset
        )

    def swap_dims(self, a: int, b: int) -> ClArray:
        axes = list(range(self.ndim))
        axes[a], axes[b] = axes[b], axes[a]
        return self.permute(axes)

    def flip(self, axes) -> ClArray:
        strides = list(self.strides)
        off = self.offset
        for a in axes:
            if self.shape[a] > 0:
                off += (self.shape[a] - 1) * strides[a]
            strides[a] = -strides[a]
        return self.view(self.shape, strides, off)

    def expand(self, shape) -> ClArray:
        lead = len(shape) - self.ndim
        strides = [0] * lead
        for d, (old, new) in enumerate(zip(self.shape, shape[lead:])):
            strides.append(self.strides[d] if old == new else 0)
        return self.view(shape, strides, self.offset)

    def slice(self, slices) -> ClArray:
        """Burn slices: `slice(start, stop, step)` per dim; a negative step walks [start, stop)
        backwards."""
        shape, strides = list(self.shape), list(self.strides)
        off = self.offset
        for d, sl in enumerate(slices):
            start, stop, step = sl.start, sl.stop, sl.step or 1
            count = max(0, -(-(stop - start) // abs(step)))
            if count:
                first = start if step > 0 else stop - 1
                off += first * strides[d]
            shape[d] = count
            strides[d] *= step
        return self.view(shape, strides, off)

    def reshape_view(self, shape) -> ClArray | None:
        """The same elements in `shape` without a copy, or None when the layout forbids it."""
        if self.is_contiguous():
            return ClArray(self.rt, self.block, shape, self.dtype, None, self.offset)
        return None


def broadcast_shape(shapes) -> tuple[int, ...]:
    """Equal-rank broadcasting over size-1 dims (Burn's rule)."""
    out = []
    for dims in zip(*shapes):
        big = [d for d in dims if d != 1]
        out.append(0 if 0 in dims else (big[0] if big else 1))
    return tuple(out)


def broadcast_strides(x: ClArray, shape) -> tuple[int, ...]:
    """x's strides for reading it as `shape` (stride 0 where x has size 1)."""
    lead = len(shape) - x.ndim
    st = [0] * lead
    for d, n in enumerate(x.shape):
        st.append(0 if (n == 1 and shape[lead + d] != 1) else x.strides[d])
    return tuple(st)
