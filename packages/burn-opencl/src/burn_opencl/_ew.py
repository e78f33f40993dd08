"""Launching elementwise kernels: broadcasting, output allocation, writes into strided views."""

from __future__ import annotations

import numpy as np

from ._array import ClArray, broadcast_shape, broadcast_strides
from ._ew_source import render_cast, render_program
from ._layout import pack
from ._runtime import SCALAR

BOOL = np.dtype(np.bool_)


def kernel(rt, dt: np.dtype, name: str):
    """Elementwise kernel `name` of element type `dt` (its program is built on first use)."""
    return rt.kernel(("ew", dt.str), "ew_" + name, lambda: render_program(dt))


def run(name: str, dt, out_dtype, shape, inputs, scalars=(), rt=None) -> ClArray:
    """New contiguous array of `shape` = kernel `name` over `inputs` broadcast to `shape`."""
    rt = rt or inputs[0].rt
    out = ClArray.empty(rt, shape, out_dtype)
    n = out.size
    if n:
        strides = [out.strides] + [broadcast_strides(x, shape) for x in inputs]
        offs = [0] + [x.offset for x in inputs]
        conv = SCALAR[np.dtype(dt)]
        args = [pack(n, shape, strides, offs), out.buf]
        args += [x.buf for x in inputs]
        args += [conv(s) for s in scalars]
        rt.launch1d(kernel(rt, np.dtype(dt), name), n, args)
    return out


def write(dst: ClArray, src: ClArray) -> None:
    """Copy `src` (broadcast to dst's shape) into the strided view `dst` in place.

    Only ever called on a buffer the calling op allocated itself (slice_assign, cat), so no
    other tensor sees the write.
    """
    n = dst.size
    if not n:
        return
    strides = [dst.strides, broadcast_strides(src, dst.shape)]
    lay = pack(n, dst.shape, strides, [dst.offset, src.offset])
    rt = dst.rt
    rt.launch1d(kernel(rt, dst.dtype, "copy"), n, [lay, dst.buf, src.buf])


def fill_view(dst: ClArray, value) -> None:
    n = dst.size
    if n:
        lay = pack(n, dst.shape, [dst.strides], [dst.offset])
        conv = SCALAR[dst.dtype]
        dst.rt.launch1d(kernel(dst.rt, dst.dtype, "fill"), n, [lay, dst.buf, conv(value)])


def contiguous(x: ClArray) -> ClArray:
    """x itself when C-contiguous, else a contiguous copy."""
    if x.is_contiguous():
        return x
    return run("copy", x.dtype, x.dtype, x.shape, [x])


def cast(x: ClArray, dtype) -> ClArray:
    dtype = np.dtype(dtype)
    if dtype == x.dtype:
        return x
    rt = x.rt
    out = ClArray.empty(rt, x.shape, dtype)
    n = out.size
    if n:
        k = rt.kernel(("cast", x.dtype.str, dtype.str), "cast", lambda: render_cast(x.dtype, dtype))
        lay = pack(n, x.shape, [out.strides, x.strides], [0, x.offset])
        rt.launch1d(k, n, [lay, out.buf, x.buf])
    return out


def unary(name: str, x: ClArray, out_dtype=None) -> ClArray:
    return run(name, x.dtype, out_dtype or x.dtype, x.shape, [x])


def binary(name: str, x: ClArray, y: ClArray, out_dtype=None) -> ClArray:
    if y.dtype != x.dtype:
        y = cast(y, x.dtype)
    shape = x.shape if x.shape == y.shape else broadcast_shape((x.shape, y.shape))
    return run(name, x.dtype, out_dtype or x.dtype, shape, [x, y])


def scalar(name: str, x: ClArray, *s, out_dtype=None) -> ClArray:
    return run(name, x.dtype, out_dtype or x.dtype, x.shape, [x], s)


def full(rt, shape, value, dtype) -> ClArray:
    dtype = np.dtype(dtype)
    return run("fill", dtype, dtype, tuple(shape), [], (value,), rt=rt)
