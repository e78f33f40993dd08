"""Grouped conv2d forward (depthwise and every other grouping) on the native kernels
(`_native/dwconv.c`, `_native/dwconv_tpl.h`).

One C call per conv: one OpenMP region of direct sliding-window tasks (image, block of groups,
strip of output rows), `schedule(dynamic, 1)` so a descheduled thread holds one task, not a
static share. Each task copies its input rows into a zero-padded per-thread buffer (split
into column phases for stride > 1) and sums register tiles of up to 8 vectors of outputs, the
bias fused. This replaced, for depthwise, a kernel that branched on the borders per tap and
ran its stride-2 taps as scalar gathers, and for other groupings one groups-1 native conv per
group (regnet: 13-55 GEMMs of 8 rows per conv, each with its `filter_classes` call).

Results do not depend on the thread count (each output is bias + its taps in (input channel,
i, j) order, summed by one thread; the tasks depend on the shapes only), and equal filters of a
group give bitwise equal channels. The x gradient (every grouping) and the weight gradient
(depthwise) run as grouped forward convs on the same kernel (`_native_dwconv_grad`).
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

from . import _conv_act, _conv_plans
from . import _native_dwconv_grad as _grad
from . import _native_ops as _ops
from ._im2col import out_size
from ._native_conv import _check_channels, _check_out_channels, _fallback, _geom, _pair
from ._native_conv_grad import _check_grad
from ._native_ops import F32, F64, _nt

# Multiply-adds per OpenMP thread at least, so tiny convs wake few threads.
MAC_GRAIN = 1 << 18


def _call(lib, nt, x, weight, bias, groups, stride, padding, dilation, out_hw) -> np.ndarray:
    """The kernel on `nt` threads. Shapes: x [n, c, h, w], weight [co, c / groups, kh, kw],
    bias [co] | None -> [n, co, oh, ow]."""
    geom = _geom(x.shape, weight.shape, stride, padding, dilation, out_hw)
    return _run(lib, nt, x, weight, bias, groups, geom, out_hw)


def _run(lib, nt, x, weight, bias, groups, geom, out_hw, ep=_conv_act.NONE) -> np.ndarray:
    """The kernel; `ep`: the fused activation's (kind, alpha, beta) (`_conv_act.epilogue`)."""
    fn = lib.dwconv2d_fwd_f32 if x.dtype == F32 else lib.dwconv2d_fwd_f64
    x, w = np.ascontiguousarray(x), np.ascontiguousarray(weight)
    out = np.empty((x.shape[0], w.shape[0], *out_hw), x.dtype)
    bp = None if bias is None else _ops._ptr(np.ascontiguousarray(bias))
    if fn(_ops._ptr(x), _ops._ptr(w), bp, _ops._ptr(out), _ops._ptr(geom), groups, nt, *ep):
        raise MemoryError("burn-ndarray native grouped conv2d: could not allocate its buffers")
    return out


def _covered(x, weight, bias, options) -> bool:
    g = options.groups
    return (
        g > 1
        and x.dtype in (F32, F64)
        and x.ndim == 4
        and weight.ndim == 4
        and weight.dtype == x.dtype
        and (bias is None or bias.dtype == x.dtype)
        and x.shape[1] == weight.shape[1] * g
        and weight.shape[0] % g == 0
        and x.shape[0] > 0
        and weight.shape[0] > 0
    )


def install(backend, lib, m: int, ops: dict) -> None:
    """conv2d with groups > 1 as native ops in `ops` (after `_native_conv.install`)."""
    threads = backend.num_threads
    # the native groups-1 conv (`_native_conv`), which makes this op's checks itself: a groups-1
    # call goes straight to it (no second plan lookup: ~1 us a call, 40 convs a model)
    own = ops.get("conv2d")
    prev = own or (lambda *a: type(backend).conv2d(backend, *a))
    # (shapes, dtypes, options) -> (geom, out_hw, multiply-adds), or None for the previous op:
    # the checks and the geometry once per shape (a call went from 7.6 to ~4 us)
    plans: dict = {}

    def plan(x, weight, bias, options):
        _check_channels("conv2d", x, weight, options.groups)
        _check_out_channels(weight, bias, options.groups)
        if not _covered(x, weight, bias, options):
            return None
        stride, padding, dilation = map(_pair, (options.stride, options.padding, options.dilation))
        h, w = x.shape[2:]
        kh, kw = weight.shape[2:]
        oh = out_size(h, kh, stride[0], padding[0], dilation[0])
        ow = out_size(w, kw, stride[1], padding[1], dilation[1])
        if oh <= 0 or ow <= 0 or min(stride) <= 0 or min(dilation) <= 0 or min(padding) < 0:
            return None
        geom = _geom(x.shape, weight.shape, stride, padding, dilation, (oh, ow))
        return geom, (oh, ow), x.shape[0] * weight.shape[0] * oh * ow * weight[0].size

    def conv2d(x, weight, bias, options, act=None):
        """conv2d; with `act` (an activation tuple) conv2d_activation (`_conv_act`)."""
        if own is not None and options.groups == 1:
            return own(x, weight, bias, options, act)
        p = _conv_plans.lookup(plans, plan, x, weight, bias, options)
        if p is None:
            if own is not None:
                return own(x, weight, bias, options, act)
            return _conv_act.then(backend, prev(x, weight, bias, options), act)
        geom, out_hw, macs = p
        nt = _nt(threads, macs, MAC_GRAIN)
        size = x.shape[0] * weight.shape[0] * out_hw[0] * out_hw[1]  # output elements
        ep = _conv_act.epilogue(act, x.dtype, size, m)
        if ep is None:
            out = _run(lib, nt, x, weight, bias, options.groups, geom, out_hw)
            return _conv_act.then(backend, out, act)
        return _run(lib, nt, x, weight, bias, options.groups, geom, out_hw, ep)

    ops["conv2d"] = conv2d

    def conv2d_activation(x, weight, bias, options, activation):
        return conv2d(x, weight, bias, options, activation)

    ops["conv2d_activation"] = conv2d_activation  # its own function: `explain` marks each op's

    # conv2d_x_backward / conv2d_weight_backward of groups > 1 as grouped forward convs
    # (`_native_dwconv_grad`); groups 1 and uncovered operands go to the ops installed before.
    prev_x = ops.get("conv2d_x_backward") or _fallback(backend, "conv2d_x_backward")
    prev_w = ops.get("conv2d_weight_backward") or _fallback(backend, "conv2d_weight_backward")

    fwd = functools.partial(_conv, lib, threads)

    def geometry(op, x, weight, g, options):
        """(stride, padding, dilation) where the native gradient applies, else None."""
        if options.groups <= 1:
            return None  # the dense conv's gradients, untouched (and their own checks)
        _check_grad(op, x, weight, g, options.groups)
        if not _covered(x, weight, None, options) or g.dtype != x.dtype or 0 in g.shape[2:]:
            return None
        geom = tuple(map(_pair, (options.stride, options.padding, options.dilation)))
        return None if min(geom[0] + geom[2]) <= 0 or min(geom[1]) < 0 else geom

    def conv2d_x_backward(x, weight, output_grad, options):
        geom = geometry("conv2d_x_backward", x, weight, output_grad, options)
        dx = None
        if geom is not None and not _flipped_conv_suits(geom, weight.shape):
            g = np.ascontiguousarray(output_grad)
            dx = _grad.x_grad(fwd, x.shape, weight, g, options.groups, *geom)
        return prev_x(x, weight, output_grad, options) if dx is None else dx

    def conv2d_weight_backward(x, weight, output_grad, options):
        geom = geometry("conv2d_weight_backward", x, weight, output_grad, options)
        if geom is None or weight.shape[1] > 1:  # grouped: one conv per channel measured slower
            return prev_w(x, weight, output_grad, options)
        kernel = tuple(weight.shape[2:])
        return _grad.weight_grad(fwd, x, output_grad, kernel, options.groups, *geom)

    ops["conv2d_x_backward"] = conv2d_x_backward
    ops["conv2d_weight_backward"] = conv2d_weight_backward


def _conv(lib, threads, x, weight, groups, stride, padding, dilation, nt=None) -> np.ndarray:
    """The grouped conv without bias, its output size computed (the gradients' building
    block); `nt` threads, else as many as its multiply-adds warrant within `threads`."""
    oh = out_size(x.shape[2], weight.shape[2], stride[0], padding[0], dilation[0])
    ow = out_size(x.shape[3], weight.shape[3], stride[1], padding[1], dilation[1])
    if nt is None:
        nt = _nt(threads, x.shape[0] * weight.shape[0] * oh * ow * weight[0].size, MAC_GRAIN)
    return _call(lib, nt, x, weight, None, groups, stride, padding, dilation, (oh, ow))


def _flipped_conv_suits(geom, w_shape) -> bool:
    """Whether the backend's own dx (`_ops_own.conv2d_x_backward`: the flipped-kernel conv,
    i.e. this kernel without the upsampled copy) takes stride, padding and dilation."""
    (stride, padding, dilation), (kh, kw) = geom, w_shape[2:]
    return stride == dilation == (1, 1) and padding[0] <= kh - 1 and padding[1] <= kw - 1


def declare(lib) -> None:
    p, L, i = ctypes.c_void_p, ctypes.c_long, ctypes.c_int
    for t, ct in (("f32", ctypes.c_float), ("f64", ctypes.c_double)):
        fn = getattr(lib, f"dwconv2d_fwd_{t}")  # ..., nt, then the epilogue's kind, alpha, beta
        fn.argtypes, fn.restype = (p, p, p, p, p, L, i, i, ct, ct), i
