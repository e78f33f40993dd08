"""conv_transpose2d forward (groups 1) on the native col2im kernel of conv2d's input gradient.

A transposed conv is the input gradient of the conv with the same weight, geometry and the
transposed conv's output as that conv's input: `conv2d_xgrad` (`_native/conv.c`) runs it as
`weight^T [co * kh * kw, ci] @ x [ci, pixels]` per (image, output-channel block) task, then
scatter-adds the columns into the task's own output planes (col2im): one OpenMP region, no
canvas copy, bitwise identical for every thread count. The bias is added after. Inputs below
the native size, groups > 1 and an output padding that leaves the conv's geometry (only when
dilation > stride) keep the numpy path (`_conv_transpose`).
"""

from __future__ import annotations

import numpy as np

from . import _native_conv as _nc
from . import _native_conv_grad as _grad
from ._conv_transpose import transposed_size
from ._im2col import out_size
from ._native_ops import F32, F64


def install(backend, lib, m: int, ops: dict) -> None:
    """conv_transpose2d as a native op in `ops` (the numpy path stays the fallback)."""
    threads = backend.num_threads
    prev = _nc._fallback(backend, "conv_transpose2d")

    def conv_transpose2d(x, weight, bias, options):
        o = options
        if not _suits(x, weight, bias, o.groups, m):
            return prev(x, weight, bias, options)
        stride, padding, pad_out, dilation = map(
            _nc._pair, (o.stride, o.padding, o.padding_out, o.dilation)
        )
        if min(stride) <= 0 or min(dilation) <= 0 or min(padding) < 0 or min(pad_out) < 0:
            return prev(x, weight, bias, options)
        n, _, h, w = x.shape
        co, kh, kw = weight.shape[1:]
        oh = transposed_size(h, kh, stride[0], padding[0], pad_out[0], dilation[0])
        ow = transposed_size(w, kw, stride[1], padding[1], pad_out[1], dilation[1])
        if oh <= 0 or ow <= 0:
            return prev(x, weight, bias, options)
        # the conv whose input gradient this is must see x's size as its output size
        if (out_size(oh, kh, stride[0], padding[0], dilation[0]) != h
                or out_size(ow, kw, stride[1], padding[1], dilation[1]) != w):  # fmt: skip
            return prev(x, weight, bias, options)
        out = _grad._x_grad(lib, threads, (n, co, oh, ow), weight, x, stride, padding, dilation)
        if bias is not None:
            out += bias.reshape(1, co, 1, 1)
        return out

    ops["conv_transpose2d"] = conv_transpose2d


def _suits(x, weight, bias, groups: int, m: int) -> bool:
    """4-D float32/float64 operands of one dtype, groups 1, channels matching, >= m inputs."""
    return (
        x.dtype in (F32, F64)
        and x.ndim == 4
        and weight.ndim == 4
        and weight.dtype == x.dtype
        and (bias is None or (bias.dtype == x.dtype and bias.shape == (weight.shape[1],)))
        and groups == 1
        and x.shape[1] == weight.shape[0]
        and x.size >= m
        and min(weight.shape) > 0
        and x.shape[0] > 0
    )
