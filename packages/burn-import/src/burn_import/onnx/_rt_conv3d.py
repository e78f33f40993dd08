"""ONNX Conv and ConvTranspose over 3 spatial dims through burn's own 3-D ops
(`burn_tensor.module.conv3d` / `conv_transpose3d`: native kernels on NdArray, burn_gpu's
vol2col/col2vol on OpenCl and Cuda, differentiable on every backend).

ONNX pads may be asymmetric: the symmetric part goes to the op, the rest is padded by hand
(Conv) or cropped from the full result (ConvTranspose), as the 1-D/2-D helpers of `_rt_nn` do.
"""

from __future__ import annotations

from burn_tensor import Tensor
from burn_tensor import module as F

from ._rt_nn import _pad_dim, _pad_spatial, _split_pads


def conv3d(x: Tensor, w: Tensor, b, strides, pads, dilations, group: int) -> Tensor:
    """Shapes: x [n, c, d, h, w], w [c_out, c/group, kd, kh, kw], b [c_out] | None,
    pads [d0, h0, w0, d1, h1, w1] -> [n, c_out, od, oh, ow]."""
    sym, extra = _split_pads(list(pads))
    if extra:
        x = _pad_spatial(x, extra, 0.0)
    return F.conv3d(x, w, b, stride=list(strides), padding=sym, dilation=list(dilations),
                    groups=group)


def conv_transpose3d(x: Tensor, w: Tensor, b, strides, pads, dilations, group: int, out_pad):
    """ONNX ConvTranspose over 3 spatial dims: the unpadded transposed conv, extended by
    `out_pad` zeros at the end and cropped by the (possibly asymmetric) pads.

    Shapes: x [n, c, d, h, w], w [c, c_out/group, kd, kh, kw], pads [d0, h0, w0, d1, h1, w1],
    out_pad [pd, ph, pw] -> [n, c_out, od, oh, ow].
    """
    y = F.conv_transpose3d(x, w, None, stride=list(strides), padding=0, padding_out=0,
                           dilation=list(dilations), groups=group)
    dims = y.dims()
    for i in range(3):
        if out_pad[i]:
            y = _pad_dim(y, 2 + i, 0, out_pad[i])
        full = dims[2 + i] + out_pad[i]
        y = y.narrow(2 + i, pads[i], full - pads[i] - pads[i + 3])
    if b is not None:
        # after the crop: ONNX adds the bias to every output cell, the zero-extended ones too
        y = y + b.reshape([1, -1, 1, 1, 1])
    return y
