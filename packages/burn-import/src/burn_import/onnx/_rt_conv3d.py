"""ONNX Conv and ConvTranspose over 3 spatial dims, as 2-D ones: one per depth tap of the kernel.

burn has conv1d/conv2d only. For depth tap j, the input depth slices that meet it are
`od * stride + j * dilation` for every output depth od: gathered and folded into the batch,
they form one conv2d with the kernel's slice j, and the kd results add up. That costs kd
conv2d calls on od-deep batches (the same multiply-adds as a direct 3-D conv) and keeps the op
on the Tensor API (any backend, differentiable).
"""

from __future__ import annotations

import numpy as np
from burn_tensor import DType, Tensor

from ._rt_nn import _pad_dim, conv


def conv3d(x: Tensor, w: Tensor, b, strides, pads, dilations, group: int) -> Tensor:
    """Shapes: x [n, c, d, h, w], w [c_out, c/group, kd, kh, kw], b [c_out] | None,
    pads [d0, h0, w0, d1, h1, w1] -> [n, c_out, od, oh, ow]."""
    n, c = x.dims()[:2]
    c_out, cg, kd, kh, kw = w.dims()
    (sd, *s_hw), (dd, *d_hw) = strides, dilations
    if pads[0] or pads[3]:
        x = _pad_dim(x, 2, pads[0], pads[3])
    depth, h, wd = x.dims()[2:]
    od = (depth - dd * (kd - 1) - 1) // sd + 1
    pads_hw = [pads[1], pads[2], pads[4], pads[5]]
    out = None
    for j in range(kd):
        at = Tensor.from_data(np.arange(od, dtype=np.int64) * sd + j * dd, x.device, DType.I64)
        xs = x.select(2, at).permute([0, 2, 1, 3, 4]).reshape([n * od, c, h, wd])
        wj = w.narrow(2, j, 1).reshape([c_out, cg, kh, kw])
        y = conv(xs, wj, None, s_hw, pads_hw, d_hw, group)
        out = y if out is None else out + y
    oh, ow = out.dims()[2:]
    out = out.reshape([n, od, c_out, oh, ow]).permute([0, 2, 1, 3, 4])
    if b is not None:
        out = out + b.reshape([1, c_out, 1, 1, 1])
    return out


def conv_transpose3d(x: Tensor, w: Tensor, b, strides, pads, dilations, group: int, out_pad):
    """ONNX ConvTranspose over 3 spatial dims as 2-D transposed convs, one per depth tap: tap j
    of input depth i lands on output depth i * stride + j * dilation, so each tap's result is
    added into those depths (`select_add`), then the depth pads are cropped.

    Shapes: x [n, c, d, h, w], w [c, c_out/group, kd, kh, kw], pads [d0, h0, w0, d1, h1, w1],
    out_pad [pd, ph, pw] -> [n, c_out, od, oh, ow].
    """
    from ._rt_nn import conv_transpose

    n, c, depth, h, wd = x.dims()
    cg_out, kd = w.dims()[1], w.dims()[2]
    (sd, *s_hw), (dd, *d_hw) = strides, dilations
    full = (depth - 1) * sd + (kd - 1) * dd + 1 + out_pad[0]
    flat = x.permute([0, 2, 1, 3, 4]).reshape([n * depth, c, h, wd])
    out = None
    for j in range(kd):
        wj = w.narrow(2, j, 1).reshape([c, cg_out] + w.dims()[3:])
        y = conv_transpose(flat, wj, None, s_hw, pads[1:3] + pads[4:6], d_hw, group, out_pad[1:])
        oh, ow = y.dims()[2:]
        if out is None:
            out = Tensor.zeros([n, y.dims()[1], full, oh, ow], x.device, dtype=y.dtype)
        y = y.reshape([n, depth, y.dims()[1], oh, ow]).permute([0, 2, 1, 3, 4])
        at = Tensor.from_data(np.arange(depth, dtype=np.int64) * sd + j * dd, x.device, DType.I64)
        out = out.select_add(2, at, y)
    out = out.narrow(2, pads[0], full - pads[0] - pads[3])
    if b is not None:
        out = out + b.reshape([1, -1, 1, 1, 1])
    return out
