"""Launching elementwise kernels: broadcasting, output allocation, writes into strided views.

The kernels are burn_gpu's eager elementwise program of the element type (`eager_program`,
one per dtype, rendered from the one expression table in the OpenCL dialect)."""

from __future__ import annotations

import numpy as np
from burn_gpu import cast_program, collapse, eager_program, pack

from ._array import ClArray, broadcast_shape, broadcast_strides
from ._plan import Plan, own_kernel, remember
from ._runtime import SCALAR

BOOL = np.dtype(np.bool_)


def render_program(dt: np.dtype) -> str:
    return eager_program(np.dtype(dt).name, "opencl")


def kernel(rt, dt: np.dtype, name: str):
    """Elementwise kernel `name` of element type `dt` (its program is built on first use)."""
    return rt.kernel(("ew", dt.str), "ew_" + name, lambda: render_program(dt))


def run(name: str, dt, out_dtype, shape, inputs, scalars=(), rt=None, key=None) -> ClArray:
    """New contiguous array of `shape` = kernel `name` over `inputs` broadcast to `shape`.

    Repeated layouts run through a cached `Plan` (see `_plan`); the first call of a layout takes
    the general path below and records the plan under `key` (default: every argument that
    decides the launch; the fast paths `unary`/`binary`/`scalar` pass shorter keys of their own).
    """
    rt = rt or inputs[0].rt
    if key is None:
        key = (name, dt, out_dtype, shape, len(scalars))
        for x in inputs:
            key += (x.dtype, x.shape, x.strides, x.offset)
    plan = rt.plans.get(key)
    if plan is not None:
        if scalars:
            return plan.with_scalars([x.buf for x in inputs], scalars)
        return plan(*[x.buf for x in inputs])
    out = _run(name, dt, out_dtype, shape, inputs, scalars, rt)
    if out.size:
        _record(rt, key, name, dt, out, inputs, len(scalars))
    return out


def _launch_form(rt, n, shape, strides):
    """(kernel prefix, global size, local size): `ewc_` over one element per item when every
    operand is contiguous in one shape (after merging dims), else `ew_`'s grid-stride loop."""
    sh, sts = collapse(shape, strides)
    if len(sh) == 1 and all(st[0] == 1 for st in sts):
        # small arrays take the small group: PoCL runs every item of a group, in range or not
        wg = rt.wg_flat if n >= rt.wg_flat else rt.wg
        return "ewc_", ((n + wg - 1) // wg * wg,), (wg,)
    wg = rt.wg
    return "ew_", (min((n + wg - 1) // wg, rt.max_groups) * wg,), (wg,)


def _record(rt, key, name, dt, out, inputs, nscalars) -> None:
    dt = np.dtype(dt)
    n = out.size
    shape = out.shape
    strides = [out.strides] + [broadcast_strides(x, shape) for x in inputs]
    offs = [0] + [x.offset for x in inputs]
    prefix, gsize, lsize = _launch_form(rt, n, shape, strides)
    k = own_kernel(rt, ("ew", dt.str), prefix + name, lambda: render_program(dt))
    k.set_arg(0, np.frombuffer(pack(n, shape, strides, offs), np.uint8))
    first_scalar = 2 + len(inputs)
    conv = SCALAR[dt] if nscalars else None
    plan = Plan(rt, k, shape, out.dtype, out.strides, gsize, lsize, first_scalar, conv)
    remember(rt, key, plan)


def _run(name: str, dt, out_dtype, shape, inputs, scalars, rt) -> ClArray:
    out = ClArray.empty(rt, shape, out_dtype)
    n = out.size
    if n:
        dt = np.dtype(dt)
        strides = [out.strides] + [broadcast_strides(x, shape) for x in inputs]
        offs = [0] + [x.offset for x in inputs]
        conv = SCALAR[dt]
        args = [pack(n, shape, strides, offs), out.buf]
        args += [x.buf for x in inputs]
        args += [conv(s) for s in scalars]
        prefix, gsize, lsize = _launch_form(rt, n, shape, strides)
        k = rt.kernel(("ew", dt.str), prefix + name, lambda: render_program(dt))
        rt.launch(k, gsize, lsize, args)
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
        k = rt.kernel(("cast", x.dtype.str, dtype.str), "cast", lambda: cast_program(x.dtype.name, dtype.name, "opencl"))
        lay = pack(n, x.shape, [out.strides, x.strides], [0, x.offset])
        rt.launch1d(k, n, [lay, out.buf, x.buf])
    return out


def unary(name: str, x: ClArray, out_dtype=None) -> ClArray:
    key = (name, out_dtype, x.dtype, x.shape, x.strides, x.offset)
    plan = x.rt.plans.get(key)
    if plan is not None:
        return plan(x.buf)
    return run(name, x.dtype, out_dtype or x.dtype, x.shape, [x], key=key)


def binary(name: str, x: ClArray, y: ClArray, out_dtype=None) -> ClArray:
    key = (
        name,
        out_dtype,
        x.dtype,
        x.shape,
        x.strides,
        x.offset,
        y.dtype,
        y.shape,
        y.strides,
        y.offset,
    )
    plan = x.rt.plans.get(key)
    if plan is not None:
        return plan(x.buf, y.buf)
    if y.dtype != x.dtype:
        y = cast(y, x.dtype)
        key = None  # the plan would be of the cast copy, not of y
    shape = x.shape if x.shape == y.shape else broadcast_shape((x.shape, y.shape))
    return run(name, x.dtype, out_dtype or x.dtype, shape, [x, y], key=key)


def scalar(name: str, x: ClArray, *s, out_dtype=None) -> ClArray:
    key = (name, len(s), out_dtype, x.dtype, x.shape, x.strides, x.offset)
    plan = x.rt.plans.get(key)
    if plan is not None:
        return plan.with_scalars((x.buf,), s)
    return run(name, x.dtype, out_dtype or x.dtype, x.shape, [x], s, key=key)


def full(rt, shape, value, dtype) -> ClArray:
    dtype = np.dtype(dtype)
    return run("fill", dtype, dtype, tuple(shape), [], (value,), rt=rt)
