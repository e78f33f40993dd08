"""ONNX Conv over 3 spatial dims, as 2-D convolutions: one per depth tap of the kernel.

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
