"""conv2d's input and weight gradients on the native kernels (`_native/conv.c`), groups 1.

The weight gradient runs the forward's (image, pixel block) tasks with `grad [co, pixels] @
columns^T`, summed per fixed slot of images; the input gradient runs `weight^T @ grad` per
(image, input-channel block) task and scatter-adds the columns back (col2im) for any stride and
dilation and where c_in < c_out, else it stays the backend's flipped-kernel conv of the
gradient (`_backend.conv2d_x_backward`), i.e. the forward task path. The same col2im kernel is
the transposed conv's forward (`_native_conv_transpose`). Split from `_native_conv` (the
forward and the GEMM plumbing, whose helpers this uses).
"""

from __future__ import annotations

import numpy as np

from . import _native_conv as _nc
from . import _native_ops as _ops
from ._native_ops import F32, _nt

# Weight-gradient partials [co, K] per slot of (image, pixel block) tasks: at most MAX_SLOTS
# slots (the threads that can share the work) and PART_BYTES.
MAX_SLOTS = 32
PART_BYTES = 64 << 20
# GEMM rows (input channels x kernel window) per x-gradient task.
XGRAD_ROWS = 128
# col2im for dx when c_in * COL2IM_CHANNEL_RATIO < c_out (see `_col2im_suits`).
COL2IM_CHANNEL_RATIO = 1


def _weight_grad(lib, threads, x, grad, kernel, stride, padding, dilation) -> np.ndarray:
    """Shapes: x [n, c, h, w], grad [n, co, oh, ow] -> [co, c, kh, kw] (only the windows that
    grad covers are read)."""
    dt = x.dtype
    fn = lib.conv2d_wgrad_f32 if dt == F32 else lib.conv2d_wgrad_f64
    x, g = np.ascontiguousarray(x), np.ascontiguousarray(grad)
    n, c = x.shape[:2]
    co, oh, ow = g.shape[1:]
    k = c * kernel[0] * kernel[1]
    pb = _nc.block_pixels(oh * ow, k, dt.itemsize)
    tasks = n * -(-(oh * ow) // pb)
    slots = max(1, min(tasks, MAX_SLOTS, PART_BYTES // (co * k * dt.itemsize)))
    part = np.empty((slots, co, k), dt)
    dw = np.empty((co, c, *kernel), dt)
    geom = _nc._geom(x.shape, (co, c, *kernel), stride, padding, dilation, (oh, ow))
    nt = min(slots, _nt(threads, n * oh * ow * k * co, _nc.MAC_GRAIN))
    ptr = _ops._ptr
    _nc._run(fn, threads, ptr(x), ptr(g), ptr(dw), ptr(part), ptr(geom), pb, slots, nt)
    return dw


def _check_grad(op: str, x, weight, g, groups: int) -> None:
    """The gradients' operands: channels as the forward's, `g` [batch, out channels, oh, ow]."""
    _nc._check_channels(op, x, weight, groups)
    if g.ndim != 4 or g.shape[:2] != (x.shape[0], weight.shape[0]):
        raise ValueError(
            f"{op}: output_grad {list(g.shape)} is not [batch "
            f"{x.shape[0]}, out channels {weight.shape[0]}, oh, ow]"
        )


def channel_block(c: int, khw: int) -> int:
    """Input channels per x-gradient task: about XGRAD_ROWS GEMM rows (c_b * kh * kw), blocks
    made even. Depends on the shapes only.

    Example:
        >>> channel_block(3, 9), channel_block(64, 9), channel_block(512, 1)
        (3, 13, 128)
    """
    cb = min(c, max(1, XGRAD_ROWS // khw))
    return -(-c // -(-c // cb))


def _x_grad(lib, threads, x_shape, weight, grad, stride, padding, dilation) -> np.ndarray:
    """Shapes: weight [co, c, kh, kw], grad [n, co, oh, ow] -> dx of x_shape [n, c, h, w]."""
    dt = grad.dtype
    fn = lib.conv2d_xgrad_f32 if dt == F32 else lib.conv2d_xgrad_f64
    w, g = np.ascontiguousarray(weight), np.ascontiguousarray(grad)
    n, c = x_shape[:2]
    co, oh, ow = g.shape[1:]
    khw = w.shape[2] * w.shape[3]
    cb = channel_block(c, khw)
    pb = _nc.block_pixels(oh * ow, cb * khw, dt.itemsize)
    dx = np.empty(x_shape, dt)
    geom = _nc._geom(x_shape, w.shape, stride, padding, dilation, (oh, ow))
    tasks = n * -(-c // cb)
    nt = min(tasks, _nt(threads, n * oh * ow * c * khw * co, _nc.MAC_GRAIN))
    ptr = _ops._ptr
    _nc._run(fn, threads, ptr(g), ptr(w), ptr(dx), ptr(geom), pb, cb, nt)
    return dx


def install(backend, lib, m: int, ops: dict) -> None:
    """conv2d_weight_backward and conv2d_x_backward as native ops in `ops` (the task path)."""
    threads = backend.num_threads
    prev_wgrad = _nc._fallback(backend, "conv2d_weight_backward")

    def conv2d_weight_backward(x, weight, output_grad, options):
        g = output_grad
        _check_grad("conv2d_weight_backward", x, weight, g, options.groups)
        if (
            not _nc._covered(x, weight, options, m)
            or g.dtype != x.dtype
            or g.shape[2] <= 0
            or g.shape[3] <= 0
        ):
            return prev_wgrad(x, weight, output_grad, options)
        o = options
        stride, padding, dilation = map(_nc._pair, (o.stride, o.padding, o.dilation))
        if min(stride) <= 0 or min(dilation) <= 0 or min(padding) < 0:
            return prev_wgrad(x, weight, output_grad, options)
        kernel = tuple(weight.shape[2:])
        return _weight_grad(lib, threads, x, g, kernel, stride, padding, dilation)

    ops["conv2d_weight_backward"] = conv2d_weight_backward
    prev_xgrad = _nc._fallback(backend, "conv2d_x_backward")

    def conv2d_x_backward(x, weight, output_grad, options):
        g = output_grad
        _check_grad("conv2d_x_backward", x, weight, g, options.groups)
        o = options
        stride, padding, dilation = map(_nc._pair, (o.stride, o.padding, o.dilation))
        if (
            not _nc._covered(x, weight, options, m)
            or g.dtype != weight.dtype
            or g.shape[2] <= 0
            or g.shape[3] <= 0
            or min(stride) <= 0
            or min(dilation) <= 0
            or min(padding) < 0
            or not _col2im_suits(x.shape, weight.shape, stride, padding, dilation)
        ):
            return prev_xgrad(x, weight, output_grad, options)
        return _x_grad(lib, threads, x.shape, weight, g, stride, padding, dilation)

    ops["conv2d_x_backward"] = conv2d_x_backward


def _col2im_suits(x_shape, w_shape, stride, padding, dilation) -> bool:
    """Whether dx takes col2im (GEMM + scatter-add) over the backend's flipped-kernel conv of
    the gradient (forward task path): always where that conv does not apply (stride or
    dilation > 1, padding > k - 1), else when input channels are fewer than output channels
    (col2im then moves c_in * kh * kw values per pixel where the flipped conv's im2col moves
    c_out * kh * kw, and its GEMMs have c_in * kh * kw rows instead of c_in)."""
    co, c, kh, kw = w_shape
    return (
        stride != (1, 1)
        or dilation != (1, 1)
        or padding[0] > kh - 1
        or padding[1] > kw - 1
        or c * COL2IM_CHANNEL_RATIO < co
    )
