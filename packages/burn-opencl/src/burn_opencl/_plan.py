"""Launch plans: everything about a launch that depends only on shapes, computed once.

A training loop launches the same kernels on the same shapes over and over. The general launch
path (broadcast strides, dim merging, packing the `Lay` struct, looking the kernel up, pool size
classes, argument conversion) costs ~10 us of Python per op, about what NVIDIA's driver needs for
the enqueue itself. A plan is keyed by the op and its operands' layouts (shape, strides, offset,
dtype) and holds its own `cl.Kernel` whose by-value arguments (the layout, fixed integers) are
set once; a call only takes an output block from the pool, sets the buffer arguments in one
pyopencl call (`_set_arg_multi`) and enqueues (positional arguments: keywords are slow through
nanobind).

Plans live per `Runtime` (`rt.plans`), at most `MAX_PLANS` (then the dict is cleared: a program
that keeps meeting new shapes pays the general path again, nothing more).
"""

from __future__ import annotations

import warnings

import numpy as np
import pyopencl as cl
from pyopencl import _cl

from ._array import ClArray
from ._pool import Block, size_class

MAX_PLANS = 4096
_new = object.__new__

if hasattr(cl.Kernel, "_set_arg_multi") and hasattr(cl.Kernel, "_set_arg_buf_pack_multi"):
    # pyopencl >= 2022: its own generated invokers use these and call the binding positionally
    _ENQUEUE = _cl.enqueue_nd_range_kernel
    _SET = cl.Kernel._set_arg_multi
    _PACK = cl.Kernel._set_arg_buf_pack_multi
else:  # an older pyopencl: the public calls, slower but equivalent

    def _ENQUEUE(queue, kernel, gsize, lsize, *_):
        return cl.enqueue_nd_range_kernel(queue, kernel, gsize, lsize)

    def _SET(kernel, flat):
        for i in range(0, len(flat), 2):
            kernel.set_arg(flat[i], flat[i + 1])

    def _PACK(kernel, flat):
        import struct

        for i in range(0, len(flat), 3):
            kernel.set_arg(flat[i], struct.pack(flat[i + 1].decode(), flat[i + 2]))


def own_kernel(rt, program_key, name: str, render) -> cl.Kernel:
    """A new `cl.Kernel` of a (cached) program: a plan's private copy, whose preset arguments no
    other launch overwrites."""
    prg = rt.program(program_key, render)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cl.Kernel(prg, name)


def new_array(rt, block, shape, dtype, strides) -> ClArray:
    """A contiguous ClArray over `block` without `ClArray.__init__`'s normalisation (the plan
    already holds a tuple shape, numpy dtype and C strides)."""
    a = _new(ClArray)
    a.rt = rt
    a.block = block
    a.buf = block.buf
    a.shape = shape
    a.dtype = dtype
    a.strides = strides
    a.offset = 0
    return a


def take(pool, size: int) -> Block:
    """A block of size class `size` (already rounded) from `pool`: a cached buffer if any."""
    bucket = pool.free.get(size)
    if bucket:
        buf = bucket.pop()
        pool.reuses += 1
        pool.in_use += size
        return Block(buf, size, pool)
    return pool.alloc(size)


class Plan:
    """One kernel launch writing a new contiguous output of a fixed shape.

    `first` is the argument index of the output buffer; the inputs' buffers follow it; `scalars`
    by-value scalars (numpy type `conv`) follow those, set per call (they may change: a learning
    rate, a fill value).
    """

    __slots__ = (
        "conv",
        "dtype",
        "first",
        "gsize",
        "kernel",
        "lock",
        "lsize",
        "nbytes",
        "pool",
        "queue",
        "rt",
        "scalar_at",
        "shape",
        "strides",
        "tchar",
    )

    def __init__(
        self, rt, kernel, shape, dtype, strides, gsize, lsize, first_scalar, conv=None, first=1
    ):
        self.rt = rt
        self.first = first
        self.kernel = kernel
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.strides = tuple(strides)
        self.nbytes = size_class(max(1, int(np.prod(shape))) * self.dtype.itemsize)
        self.gsize = tuple(gsize)
        self.lsize = tuple(lsize)
        self.pool = rt.pool
        self.queue = rt.queue
        self.lock = rt.lock
        self.scalar_at = first_scalar
        self.conv = conv
        self.tchar = None if conv is None else np.dtype(conv).char.encode()

    def out(self) -> ClArray:
        """A new output array from the pool (the size class is known: no rounding per call)."""
        return new_array(self.rt, take(self.pool, self.nbytes), self.shape, self.dtype, self.strides)

    def __call__(self, *bufs) -> ClArray:
        out = self.out()
        k = self.kernel
        f = self.first
        with self.lock:
            if len(bufs) == 1:
                _SET(k, (f, out.buf, f + 1, bufs[0]))
            elif len(bufs) == 2:
                _SET(k, (f, out.buf, f + 1, bufs[0], f + 2, bufs[1]))
            else:
                args = [f, out.buf]
                for i, b in enumerate(bufs):
                    args += (f + 1 + i, b)
                _SET(k, tuple(args))
            _ENQUEUE(self.queue, k, self.gsize, self.lsize, None, None, False, False)
        return out

    def with_scalars(self, bufs, scalars) -> ClArray:
        out = self.out()
        k = self.kernel
        f = self.first
        tc = self.tchar
        num = float if tc in (b"f", b"d") else int
        at = self.scalar_at
        if len(bufs) == 1 and len(scalars) == 1:
            args = (f, out.buf, f + 1, bufs[0])
            packed = (at, tc, num(scalars[0]))
        else:
            args = [f, out.buf]
            for i, b in enumerate(bufs):
                args += (f + 1 + i, b)
            packed = []
            for i, s in enumerate(scalars):
                packed += (at + i, tc, num(s))
            args, packed = tuple(args), tuple(packed)
        with self.lock:
            _SET(k, args)
            _PACK(k, packed)
            _ENQUEUE(self.queue, k, self.gsize, self.lsize, None, None, False, False)
        return out


def remember(rt, key, plan) -> None:
    plans = rt.plans
    if len(plans) >= MAX_PLANS:
        plans.clear()
    plans[key] = plan
