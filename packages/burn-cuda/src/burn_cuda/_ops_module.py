"""Module ops on the GPU: convolutions as burn_gpu's im2col kernel + cuBLAS GEMM (cupy 14 has
no cuDNN), transposed convolutions as GEMM + burn_gpu's col2im gather; pools and unfold4d are
burn_gpu's `GpuModuleOps` (the code OpenCl runs); interpolation is burn_tensor's separable
matrix products run on cupy.

conv2d's input and weight gradients (float32 without TF32, float64, one group) run the same
kernels as burn_tensor's defaults, called directly: the input gradient one GEMM + col2im, the
weight gradient im2col + one batched GEMM + the column sum over the batch (`_gemm.sum_rows`),
where the defaults went through 5-7 backend ops (~100 us of host time each on the H100 host).
Other cases take the defaults (unfold4d and matmul for weights, conv_transpose2d for inputs).

Before any of that, the three conv2d passes try burn_gpu's direct kernels (`conv2d_direct` and
its two gradients: few channels, float32/float64, one group; full float32 FMAs whatever
`allow_tf32` says), which never write im2col columns: the guide model's convolutions at batch
1024 spent ~0.9 of a 1.63 ms captured step in im2col, col2im and the GEMMs around them.
`BURN_GPU_CONV_DIRECT=0` keeps every call on im2col.
"""

from __future__ import annotations

import numpy as np
from burn_gpu import GpuDirectConv, GpuModuleOps, GpuNormOps, col2im, unfold
from burn_tensor.array_api import interpolation
from burn_tensor.ops import ConvOptions, ConvTransposeOptions, InterpolateOptions

from . import _gemm
from ._dtypes import HALF_DTYPES, KERNEL_FLOATS
from ._gpu_runtime import kernels_of
from ._kernel_source import BIAS_BLOCK
from ._half_ops import contiguous, empty
from ._kernels import i64, kernel, launch_grid
from ._ops_linear import add_bias, direct
from ._platform import load_cupy

_BIAS_DTYPES = KERNEL_FLOATS
#: float32/float64 conv bias gradients of at least this many elements per channel take two
#: reductions (rows, then columns) instead of `sum_keep_mid`'s block per channel
_SPLIT_BIAS = 1 << 17


def _pair(v) -> tuple[int, int]:
    return (int(v[0]), int(v[1]))


def _as(a, dtype):
    """a in `dtype` (itself when it already is: cupy's astype(copy=False) costs a call)."""
    return a if a.dtype == dtype else a.astype(dtype)


def _unfold(x, kernel_size, stride, padding, dilation):
    """burn_gpu's im2col: [n, c, h, w] -> [n, c*kh*kw, oh*ow], oh, ow."""
    return unfold(kernels_of(x), x, kernel_size, stride, padding, dilation)


class CudaModuleOps(GpuDirectConv, GpuNormOps, GpuModuleOps):
    # layer_norm / layer_norm_backward: burn_gpu's kernels (`GpuNormOps`), one and three launches
    # -- convolution ------------------------------------------------------------------------------
    def conv2d(self, x, weight, bias, options: ConvOptions):
        out = self._direct_conv("conv2d", x, weight, bias, options)
        if out is not None:  # few channels: one kernel, bias included, no columns
            return out
        o = options
        n = x.shape[0]
        c_out, cg, kh, kw = weight.shape
        g = o.groups
        cols, oh, ow = _unfold(x, (kh, kw), o.stride, o.padding, o.dilation)
        cols = cols.reshape(n, g, cg * kh * kw, oh * ow)
        wm = _as(weight, x.dtype).reshape(1, g, c_out // g, cg * kh * kw)
        out = self.float_matmul(wm, cols).reshape(n, c_out, oh, ow)  # cuBLAS batched GEMM
        if bias is not None:
            b = _as(bias, x.dtype)
            # in place on the fresh GEMM output: one bare launch (a [1, c, 1, 1] broadcast has
            # two broadcast runs, which the hot path's add does not cover: cupy's ufunc)
            fresh = out._c_contiguous and out.dtype in _BIAS_DTYPES
            if not (fresh and add_bias(out, b, c_out, oh * ow)):
                out = self.float_add(out, b.reshape(1, c_out, 1, 1))
        return out

    def conv2d_x_backward(self, x, weight, output_grad, options: ConvOptions):
        g = output_grad
        dx = self._direct_conv("x_backward", x, weight, g, options)
        if dx is not None:
            return dx
        if options.groups == 1 and direct(self, x, weight, g) and weight._c_contiguous:
            n, c_out, h, w = g.shape
            _, c_in, kh, kw = weight.shape
            # cols [n, c_in*kh*kw, h*w] = W^T [c_in*kh*kw, c_out] @ g [n, c_out, h*w]
            wt = weight.reshape(1, c_out, c_in * kh * kw).swapaxes(1, 2)
            cols = _gemm.matmul(wt, g.reshape(n, c_out, h * w))
            if cols is not None:
                o = options
                return col2im(kernels_of(cols), cols, c_in, (h, w), x.shape[2:], (kh, kw),
                              _pair(o.stride), _pair(o.padding), _pair(o.dilation))  # fmt: skip
        return super().conv2d_x_backward(x, weight, output_grad, options)

    def conv2d_weight_backward(self, x, weight, output_grad, options: ConvOptions):
        g = output_grad
        dw = self._direct_conv("weight_backward", x, weight, g, options)
        if dw is not None:
            return dw
        if options.groups == 1 and direct(self, x, weight, g):
            c_out, c_in, kh, kw = weight.shape
            n = x.shape[0]
            cols = _unfold(x, (kh, kw), options.stride, options.padding, options.dilation)[0]
            length = cols.shape[2]
            # per image: g[b] [c_out, L] @ cols[b]^T [L, c_in*kh*kw] (transposed in place)
            prod = _gemm.matmul(g.reshape(n, c_out, length), cols.swapaxes(1, 2))
            if prod is not None:
                if n == 1:
                    return prod.reshape(weight.shape)
                dw = _gemm.sum_rows(prod.reshape(n, c_out * c_in * kh * kw))
                if dw is not None:
                    return dw.reshape(weight.shape)
        return super().conv2d_weight_backward(x, weight, output_grad, options)

    def conv2d_bias_backward(self, x, weight, bias, output_grad):
        # one reduction over (batch, h, w), not three sum_dims: our kernel, a block per channel
        # (cupy's multi-axis sum took 30-70 us of host time); float32/float64 and the half
        # types (float64 accumulation, one rounding), a strided gradient copied first
        cp = load_cupy()
        g = output_grad
        if (g.dtype in _BIAS_DTYPES or g.dtype in HALF_DTYPES) and g.ndim == 4:
            g = contiguous(g)
            n, c, h, w = g.shape
            out = empty((c,), g.dtype)
            if n * h * w == 0:
                out.view(np.uint8).fill(0)  # all-zero bits: +0.0 in every float type
            elif g.dtype in _BIAS_DTYPES and n * h * w >= _SPLIT_BIAS and h * w > 1:
                # few channels over a long batch: a block per channel leaves the GPU idle (the
                # guide's batch 1024: 84 us per call on the H200), so the rows (n, c) first (a
                # warp per row), then the columns over n (burn_gpu's column kernels)
                rows = self.float_sum_dim(g.reshape(n * c, h * w), 1).reshape(n, c)
                out = self.float_sum_dim(rows, 0).reshape(c)
            else:
                # burn_gpu's sum_keep_mid (float64 accumulation, a fixed tree: same bits every run)
                k = kernel("sum_keep_mid", g.dtype)
                launch_grid(k, c, BIAS_BLOCK, out, g, i64(0), i64(n), i64(c), i64(h * w))
        else:
            out = cp.sum(g, axis=(0, 2, 3), dtype=g.dtype)
        shape = tuple(bias.shape)
        return out if out.shape == shape else out.reshape(shape)

    def conv_transpose2d(self, x, weight, bias, options: ConvTransposeOptions):
        cp = load_cupy()
        o = options
        n, c_in, h, w = x.shape
        _, cog, kh, kw = weight.shape
        g = o.groups
        c_out = cog * g
        sh, sw = _pair(o.stride)
        ph, pw = _pair(o.padding)
        dh, dw = _pair(o.dilation)
        oh = (h - 1) * sh - 2 * ph + dh * (kh - 1) + int(o.padding_out[0]) + 1
        ow = (w - 1) * sw - 2 * pw + dw * (kw - 1) + int(o.padding_out[1]) + 1
        # cols [n, g, cog*kh*kw, h*w] = W_g^T @ x_g: every product, then gathered per pixel.
        wm = _as(weight, x.dtype).reshape(g, c_in // g, cog * kh * kw)
        xs = x.reshape(n, g, c_in // g, h * w)
        rt = kernels_of(x)
        cols = rt.contiguous(self.float_matmul(cp.swapaxes(wm, 1, 2)[None], xs), compute=True)
        out = col2im(rt, cols.reshape(n, c_out * kh * kw, h * w), c_out, (h, w), (oh, ow),
                     (kh, kw), (sh, sw), (ph, pw), (dh, dw))  # fmt: skip
        out = _as(out, x.dtype)
        if bias is not None:
            out += _as(bias, x.dtype).reshape(1, c_out, 1, 1)
        return out

    # -- pools and unfold4d: burn_gpu's `GpuModuleOps` (the code OpenCl runs) --------------------
    def interpolate(self, x, output_size, options: InterpolateOptions):
        # burn_tensor's matrices (weights in float64): burn_gpu's kernel computes bicubic
        # weights in float32, 2.4e-4 off Burn's literals without FMA contraction (OpenCl's 2e-4)
        return interpolation.interpolate(x, _pair(output_size), options.mode, load_cupy())

    def interpolate_backward(self, x, grad, output_size, options: InterpolateOptions):
        return interpolation.interpolate_backward(
            x, grad, _pair(output_size), options.mode, load_cupy()
        )
