"""The direct convolution kernels (`_conv_direct.py`) launched over the runtime contract: the
backends' conv2d, conv2d_x_backward and conv2d_weight_backward call these first and take their
im2col + GEMM path when one returns None.

Where: `BURN_GPU_CONV_DIRECT` unset (or `auto`): on GPU devices (`Runtime.cpu` false); `1`: on
every device, CPUs (PoCL) included; `0`: nowhere (A/B runs against im2col). A CPU device keeps
im2col by default: its `im2col_rows` + GEMM is not the cost there, and PoCL compiles a direct
program per conv shape (the kernels are specialised on channels and window) at ~0.3-1 s each,
which the conformance suite's ~20 conv shapes per dtype would pay on every CI run.

Eligible: one group, float32 or float64 with every operand of
that dtype, a plan from `direct_plan` (at most 32 output channels, c_in * kh * kw <= 144, the
weights in 32 KiB of local memory), no empty dim and every array under 2^31 elements. These are
FMA kernels in the compute type: float32 convolutions are full float32 whether or not a backend
allows TF32 for its GEMMs.
"""

from __future__ import annotations

import math
import os

import numpy as np

from ._colreduce import col_plan, col_program
from ._conv_direct import direct_plan, direct_program, dw_chunks
from ._ops_module import out_size

#: the variable that turns the direct kernels off (`0`), for A/B runs against im2col
ENV = "BURN_GPU_CONV_DIRECT"
_FLOATS = ("float32", "float64")
_INT_MAX = 2**31 - 1


def _pair(v) -> tuple[int, int]:
    return (int(v[0]), int(v[1]))


def _plan(rt, dtype, weight_shape, groups, *arrays):
    """The `DirectPlan` for a conv of `weight_shape` over `arrays` (all of `dtype`), or None
    when the direct kernels do not take it (see the module docstring)."""
    mode = os.environ.get(ENV, "auto")
    if groups != 1 or mode == "0" or (rt.cpu and mode != "1"):
        return None
    dt = np.dtype(dtype)
    if dt.name not in _FLOATS or any(a is not None and a.dtype != dt for a in arrays):
        return None
    for a in arrays:
        if a is not None and (0 in a.shape or math.prod(a.shape) > _INT_MAX // 2):
            return None
    co, ci, kh, kw = (int(v) for v in weight_shape)
    return direct_plan(co, ci, kh, kw, dt.itemsize, rt.max_group)


def _kernel(rt, dt, plan, name):
    key = ("dconv", dt.name, plan)
    return rt.kernel(key, name, lambda: direct_program(dt.name, plan, rt.dialect))


def _geo(n, h, w, oh, ow, stride, padding, dilation) -> list:
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    return [(v, "int32") for v in (n, h, w, oh, ow, sh, sw, ph, pw, dh, dw)]


def _offsets(rt, *arrays):
    """The element offsets of `arrays` as int32 kernel arguments, or None when one starts past
    2^30 (offset + size must stay under 2^31: the kernels' indices are 32-bit)."""
    offs = [rt.layout(a)[1] for a in arrays]
    if max(offs) > _INT_MAX // 2:
        return None
    return [(o, "int32") for o in offs]


def _grad_operands(rt, x, weight, output_grad, conv, pair):
    """(plan, a, b, tail) of a gradient pass of conv2d (`conv`: stride, padding, dilation,
    groups): its `DirectPlan`, the two operands it reads (`pair`, two of x, weight and
    output_grad, in that order) contiguous, and the launch arguments after them (the geometry,
    then their int32 offsets); None when the direct kernels do not take the call."""
    g = output_grad
    plan = _plan(rt, g.dtype, weight.shape, conv[3], x, weight, g)
    if plan is None or x.shape[1] != plan.ci or g.shape[1] != plan.co:
        return None
    a, b = rt.contiguous(pair[0]), rt.contiguous(pair[1])
    offs = _offsets(rt, a, b)
    if offs is None:
        return None
    n, _, h, w = x.shape
    return plan, a, b, [*_geo(n, h, w, g.shape[2], g.shape[3], *conv[:3]), *offs]


def conv2d_direct(rt, x, weight, bias, stride, padding, dilation, groups):
    """conv2d of x [n, c_in, h, w] by weight [c_out, c_in, kh, kw] (+ bias [c_out]) as one
    `dconv_fwd` launch, or None when the direct kernels do not take the call."""
    plan = _plan(rt, x.dtype, weight.shape, groups, x, weight, bias)
    if plan is None or x.shape[1] != plan.ci:
        return None
    n, _, h, w = x.shape
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    oh, ow = out_size(h, plan.kh, sh, ph, dh), out_size(w, plan.kw, sw, pw, dw)
    if oh <= 0 or ow <= 0 or n * plan.co * oh * ow > _INT_MAX // 2:
        return None
    x, weight = rt.contiguous(x), rt.contiguous(weight)
    b = weight if bias is None else rt.contiguous(bias)  # unread without a bias
    offs = _offsets(rt, x, weight, b)
    if offs is None:
        return None
    out = rt.empty((n, plan.co, oh, ow), x.dtype)
    items = n * oh * -(-ow // plan.px)
    args = [out, x, weight, b, *_geo(n, h, w, oh, ow, stride, padding, dilation), *offs,
            (int(bias is not None), "int32")]  # fmt: skip
    rt.call(_kernel(rt, x.dtype, plan, "dconv_fwd"), items, args, group=plan.wg)
    return out


def conv2d_x_backward_direct(rt, x, weight, output_grad, stride, padding, dilation, groups):
    """The input gradient (x's shape) of conv2d given `output_grad` [n, c_out, oh, ow], as one
    `dconv_dx` launch, or None when the direct kernels do not take the call."""
    conv = (stride, padding, dilation, groups)
    got = _grad_operands(rt, x, weight, output_grad, conv, (output_grad, weight))
    if got is None:
        return None
    plan, g, weight, tail = got
    n, _, h, w = x.shape
    out = rt.empty(tuple(x.shape), g.dtype)
    items = n * plan.ncb * h * -(-w // plan.pxb)
    args = [out, g, weight, *tail]
    rt.call(_kernel(rt, g.dtype, plan, "dconv_dx"), items, args, group=plan.wg)
    return out


def conv2d_weight_backward_direct(rt, x, weight, output_grad, stride, padding, dilation, groups):
    """The weight gradient (weight's shape) of conv2d: `dconv_dw` writes a row of partial sums
    per chunk of output pixels, the column kernels sum the rows in order (one or two launches);
    one chunk writes the result directly. None when the direct kernels do not take the call."""
    conv = (stride, padding, dilation, groups)
    got = _grad_operands(rt, x, weight, output_grad, conv, (x, output_grad))
    if got is None:
        return None
    plan, x, g, tail = got
    dt = g.dtype
    k = plan.co * plan.ci * plan.kh * plan.kw
    chunks, per = dw_chunks(plan, g.shape[0] * g.shape[2] * g.shape[3])
    out = rt.empty(tuple(weight.shape), dt)
    part = out if chunks == 1 else rt.empty((chunks, k), dt)  # float32/float64: T is S
    args = [part, x, g, *tail, (per, "int32")]
    rt.call(_kernel(rt, dt, plan, "dconv_dw"), chunks * plan.wg, args, group=plan.wg)
    if chunks > 1:
        _sum_rows(rt, part, out, chunks, k)
    return out


def _sum_rows(rt, part, out, rows: int, cols: int) -> None:
    """out[j] = sum over i of part[i, j] (contiguous [rows, cols] of out's dtype), in order, by
    burn_gpu's column kernels (`_colreduce.py`): one launch, or two with per-chunk partials."""
    rwg = rt.reduce_local
    dt = np.dtype(part.dtype)
    # the key the OpenCl backend's column reductions use for the same program: built once
    key = ("cols", dt.str, rwg)
    render = lambda: col_program(dt.name, rwg, rt.dialect)  # noqa: E731
    plan = col_plan(1, rows, cols, rwg)
    p2 = out if plan.chunks == 1 else rt.empty((plan.chunks * cols,), dt)
    geo = [(1, "int32"), (rows, "int32"), (cols, "int32"), (plan.chunks, "int32"),
           (plan.ltx, "int32"), (1, "int32")]  # fmt: skip
    first = rt.kernel(key, "sum_cols", render)
    rt.call(first, plan.groups * rwg, [out, p2, part, (rt.layout(part)[1], "int32"), *geo], group=rwg)
    if plan.chunks > 1:
        fin = rt.kernel(key, "sum_cols_fin", render)
        args = [out, p2, (0, "int32"), (1, "int32"), (plan.chunks, "int32"), (cols, "int32"),
                (plan.ltx, "int32"), (1, "int32")]  # fmt: skip
        rt.call(fin, plan.fin_groups * rwg, args, group=rwg)


class GpuDirectConv:
    """Mixin of a `GpuBackend`'s module ops (`self.kernels_of`): `_direct_conv` runs one conv2d
    pass on the direct kernels with the call's `ConvOptions`, the backends' first try in
    conv2d, conv2d_x_backward and conv2d_weight_backward."""

    def _direct_conv(self, op: str, x, weight, other, options):
        """`op`: "conv2d" (`other` the bias or None), "x_backward" or "weight_backward" (`other`
        the output gradient, whose runtime launches): the result, or None when the direct
        kernels do not take the call (the backend then takes its im2col path)."""
        o = options
        rt = self.kernels_of(x if op == "conv2d" else other)
        return _PASSES[op](rt, x, weight, other, o.stride, o.padding, o.dilation, o.groups)


_PASSES = {
    "conv2d": conv2d_direct,
    "x_backward": conv2d_x_backward_direct,
    "weight_backward": conv2d_weight_backward_direct,
}
