"""Module ops of the contract on OpenCL: the convolutions as burn_gpu's im2col/col2im around
the matmul kernel (`_matmul`), the bias gradient as one reduction, and interpolation's
backward. Pools, unfold4d and interpolation's forward are burn_gpu's `GpuModuleOps` (the
kernels and code Cuda runs).

conv2d and its two gradients first try burn_gpu's direct kernels (`conv2d_direct` and its
gradients: few channels, float32/float64, one group), which never write im2col columns;
`BURN_GPU_CONV_DIRECT=0` turns them off. Other conv backward passes stay the base class's
defaults: they are written with conv2d, conv_transpose2d, unfold4d (im2col here) and matmul,
which are this module's kernels.
Interpolation's backward is the exact adjoint of its separable form: with the 1-D interpolation
matrices A_h [oh, h] and A_w [ow, w] (built on the host, small), grad_x = A_h^T @ grad @ A_w.
"""

from __future__ import annotations

import numpy as np
from burn_gpu import GpuDirectConv, GpuModuleOps, GpuNormOps, col2im, unfold
from burn_tensor.array_api.interpolation import interp_matrix

from . import _ew
from ._array import ClArray
from ._gpu_runtime import kernels_of
from ._matmul import matmul
from ._ops_reduce import _kernel as reduce_kernel


def _bias(out, bias):
    if bias is None:
        return out
    b = _ew.contiguous(bias).reshape_view((1, bias.shape[0], 1, 1))
    return _ew.binary("add", out, b)


class OpenClModuleOps(GpuDirectConv, GpuNormOps, GpuModuleOps):
    # layer_norm / layer_norm_backward: burn_gpu's kernels (`GpuNormOps`), one and three launches
    def conv2d(self, x, weight, bias, options):
        out = self._direct_conv("conv2d", x, weight, bias, options)
        if out is not None:  # few channels: one kernel, bias included, no columns
            return out
        o = options
        n = x.shape[0]
        cout, cig, kh, kw = weight.shape
        grp = o.groups
        cols, oh, ow = unfold(kernels_of(x), x, (kh, kw), o.stride, o.padding, o.dilation)
        kk = cig * kh * kw
        cols = cols.reshape_view((n, grp, kk, oh * ow))
        w4 = _ew.contiguous(weight).reshape_view((1, grp, cout // grp, kk))
        out = matmul(w4, cols).reshape_view((n, cout, oh, ow))
        return _bias(out, bias)

    def conv2d_x_backward(self, x, weight, output_grad, options):
        dx = self._direct_conv("x_backward", x, weight, output_grad, options)
        if dx is not None:
            return dx
        return super().conv2d_x_backward(x, weight, output_grad, options)

    def conv2d_weight_backward(self, x, weight, output_grad, options):
        dw = self._direct_conv("weight_backward", x, weight, output_grad, options)
        if dw is not None:
            return dw
        return super().conv2d_weight_backward(x, weight, output_grad, options)

    def conv_transpose2d(self, x, weight, bias, options):
        o = options
        x = _ew.contiguous(x)
        n, cin, h, w = x.shape
        _, cog, kh, kw = weight.shape
        grp = o.groups
        cig, cout = cin // grp, cog * grp
        xg = x.reshape_view((n, grp, cig, h * w))
        wg = _ew.contiguous(weight).reshape_view((1, grp, cig, cog * kh * kw)).swap_dims(2, 3)
        cols = matmul(wg, xg)  # [n, g, cog*kh*kw, h*w] == [n, cout, kh, kw, h, w]
        oh = (h - 1) * o.stride[0] - 2 * o.padding[0] + o.dilation[0] * (kh - 1)
        ow = (w - 1) * o.stride[1] - 2 * o.padding[1] + o.dilation[1] * (kw - 1)
        out_hw = (oh + o.padding_out[0] + 1, ow + o.padding_out[1] + 1)
        out = col2im(kernels_of(x), cols, cout, (h, w), out_hw, (kh, kw), o.stride, o.padding,
                     o.dilation)  # fmt: skip
        return _bias(out, bias)

    def conv2d_bias_backward(self, x, weight, bias, output_grad):
        """Sum of the output gradient over batch and pixels per channel: one launch (the
        default takes three sum_dim launches)."""
        g = _ew.contiguous(output_grad)
        n, c, h, w = g.shape
        rt = g.rt
        out = ClArray.empty(rt, (c,), g.dtype)
        if c:
            if n * h * w == 0:
                return _ew.full(rt, tuple(bias.shape), 0, g.dtype)
            k = reduce_kernel(rt, g.dtype, self.int_dtype.np, "sum_keep_mid")
            i32 = np.int32
            args = [out.buf, g.buf, i32(g.offset), i32(n), i32(c), i32(h * w)]
            rt.launch(k, (c * rt.wg,), (rt.wg,), args)
        return out.reshape_view(tuple(bias.shape))

    def interpolate_backward(self, x, grad, output_size, options):
        rt = grad.rt
        h, w = x.shape[2:]
        oh, ow = int(output_size[0]), int(output_size[1])
        ah = ClArray.from_numpy(rt, interp_matrix(options.mode, h, oh).astype(x.dtype))
        aw = ClArray.from_numpy(rt, interp_matrix(options.mode, w, ow).astype(x.dtype))
        ah_t = ah.reshape_view((1, 1, oh, h)).swap_dims(2, 3)  # [1, 1, h, oh]
        aw4 = aw.reshape_view((1, 1, ow, w))
        return matmul(ah_t, matmul(grad, aw4))
