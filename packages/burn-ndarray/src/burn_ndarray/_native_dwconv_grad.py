"""Gradients of grouped conv2d (groups > 1) as grouped forward convs on the native kernel
(`_native_dwconv`), so they inherit its speed and its thread-count independence.

- dx for stride > 1: the gradient zero-upsampled by the stride (plus the rows and columns no
  window reached), convolved at stride 1 with the flipped, in/out-swapped weights. The numpy
  path (the default's grouped conv_transpose2d) took 11.9 ms for a 144x56x56 5x5 stride-2
  depthwise conv whose forward takes 0.2 ms. Stride 1 already runs as the flipped-kernel
  forward conv (`_ops_own.conv2d_x_backward`).
- dw: for each input channel of a group, a grouped conv whose "images" are the channels and
  whose "input channels" are the batch: x [n, c, h, w] as [1, groups * n, h, w], the gradient
  [n, co, oh, ow] as weights [co, n, oh, ow], stride and dilation swapped; its output, cropped
  to the kernel, is dw[:, ci]. The numpy path (unfold + a GEMM per group) took 5.3 ms for a
  96x56x56 3x3 depthwise conv, this 0.75. Used for depthwise only: with 8 channels per group
  (regnet's 104x28x28) the 8 convs took 1.61 ms against the numpy path's 0.69.
"""

from __future__ import annotations

import numpy as np


def x_grad(fwd, x_shape, weight, g, groups, stride, padding, dilation):
    """dx of x_shape through `fwd(x, weight, groups, stride, padding, dilation)`, or None where
    the stride-1 conv would need a negative padding (padding > dilation * (kernel - 1))."""
    n, c, h, w = x_shape
    co, cig, kh, kw = weight.shape
    cog = co // groups
    pads = tuple(d * (k - 1) - p for d, k, p in zip(dilation, (kh, kw), padding))
    if min(pads) < 0:
        return None
    oh, ow = g.shape[2:]
    # rows / columns after the last window's start that no window reached (zeros in dx's conv)
    eh = h + 2 * padding[0] - dilation[0] * (kh - 1) - 1 - (oh - 1) * stride[0]
    ew = w + 2 * padding[1] - dilation[1] * (kw - 1) - 1 - (ow - 1) * stride[1]
    up = np.zeros((n, co, (oh - 1) * stride[0] + 1 + eh, (ow - 1) * stride[1] + 1 + ew), g.dtype)
    up[:, :, : (oh - 1) * stride[0] + 1 : stride[0], : (ow - 1) * stride[1] + 1 : stride[1]] = g
    wt = weight.reshape(groups, cog, cig, kh, kw).transpose(0, 2, 1, 3, 4)[..., ::-1, ::-1]
    wt = np.ascontiguousarray(wt).reshape(groups * cig, cog, kh, kw)
    return fwd(up, wt, groups, (1, 1), pads, dilation)


def weight_grad(fwd, x, g, kernel, groups, stride, padding, dilation):
    """dw [co, c / groups, kh, kw] through `fwd` (one grouped conv per input channel of a
    group)."""
    n, c = x.shape[:2]
    cig = c // groups
    gt = np.ascontiguousarray(g.transpose(1, 0, 2, 3))  # [co, n, oh, ow]
    parts = []
    for ci in range(cig):
        xi = x[:, ci::cig].transpose(1, 0, 2, 3).reshape(1, groups * n, *x.shape[2:])
        out = fwd(xi, gt, groups, dilation, padding, stride)
        parts.append(out[0, :, : kernel[0], : kernel[1]])
    return np.ascontiguousarray(np.stack(parts, axis=1))
