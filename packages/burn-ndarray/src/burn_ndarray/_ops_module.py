"""Module ops (conv, pools, interpolate) of the NdArray backend: thin adapters onto numpy kernels.

The kernels live in `_conv`, `_conv_transpose`, `_pool` and `_im2col` (interpolation in
`burn_tensor.array_api.interpolation`, shared with burn_cuda), and take plain tuples; these functions unpack Burn's option records
(they are NdArray's module ops, listed in its dispatch table `_ops_table.OPS`; a contract default
they fall back to is called as `Backend.<op>(self, ...)`). Overrides of base-class defaults
(conv gradients, unfold4d) exist because the defaults build them from slower generic ops.
Inputs are never written: every kernel allocates its output.
"""

from __future__ import annotations

from burn_tensor import Backend
from burn_tensor.array_api import interpolation
from burn_tensor.ops import (
    ConvOptions,
    ConvTransposeOptions,
    InterpolateOptions,
    UnfoldOptions,
)

from . import _attention, _conv, _conv_transpose, _im2col, _pool


def _attention_kernel(q, k, v) -> bool:
    """Whether the blocked kernel takes these operands (one float dtype it has)."""
    return q.dtype in _attention.KERNEL_DTYPES and k.dtype == q.dtype and v.dtype == q.dtype


def _pair(v) -> tuple[int, int]:
    return (int(v[0]), int(v[1]))


class NdArrayModuleOps:
    """NdArray's module ops, one method each (a namespace read by `_ops_table`, not a base)."""

    # -- attention: the blocked kernel (`_attention`) for float32/float64 where the native one
    # (`_native_attention`, which also drops weights) is not built; with dropout on the weights
    # this Python-pool fallback takes the default decomposition (its keep mask built in numpy)
    def attention(self, query, key, value, mask, causal, scale, dropout=0.0, seed=None):
        if dropout or not _attention_kernel(query, key, value):
            return Backend.attention(self, query, key, value, mask, causal, scale, dropout, seed)
        return _attention.forward(query, key, value, mask, causal, scale, self.num_threads)

    def attention_backward(
        self, query, key, value, mask, output_grad, causal, scale, dropout=0.0, seed=None
    ):
        if dropout or not _attention_kernel(query, key, value):
            return Backend.attention_backward(
                self, query, key, value, mask, output_grad, causal, scale, dropout, seed
            )
        return _attention.backward(
            query, key, value, mask, output_grad, causal, scale, self.num_threads
        )

    # -- convolution ------------------------------------------------------------------------------
    def conv2d(self, x, weight, bias, options: ConvOptions):
        o = options
        return _conv.conv2d(
            x, weight, bias, _pair(o.stride), _pair(o.padding), _pair(o.dilation), o.groups
        )

    def conv_transpose2d(self, x, weight, bias, options: ConvTransposeOptions):
        o = options
        return _conv_transpose.conv_transpose2d(
            x,
            weight,
            bias,
            _pair(o.stride),
            _pair(o.padding),
            _pair(o.padding_out),
            _pair(o.dilation),
            o.groups,
        )

    def conv2d_weight_backward(self, x, weight, output_grad, options: ConvOptions):
        o = options
        return _conv.conv2d_weight_grad(
            x,
            output_grad,
            tuple(weight.shape[2:]),
            _pair(o.stride),
            _pair(o.padding),
            _pair(o.dilation),
            o.groups,
        )

    def conv_transpose2d_x_backward(self, weight, output_grad, options: ConvTransposeOptions):
        # A conv of the output grad; its natural size exceeds the input's when
        # padding_out >= stride (possible when dilation > stride), so ask for the input's size.
        o = options
        kernel = weight.shape[2:]
        hw = []
        for d in range(2):
            full = output_grad.shape[2 + d] - 1 + 2 * o.padding[d] - o.padding_out[d]
            hw.append((full - o.dilation[d] * (kernel[d] - 1)) // o.stride[d] + 1)
        return _conv.conv2d(
            output_grad,
            weight,
            None,
            _pair(o.stride),
            _pair(o.padding),
            _pair(o.dilation),
            o.groups,
            out_hw=tuple(hw),
        )

    def conv_transpose2d_weight_backward(
        self, x, weight, output_grad, options: ConvTransposeOptions
    ):
        # dW[ci, co, i, j] = sum x[n, ci, h, w] * grad[n, co, h*s + i*d - p, w*s + j*d - p]:
        # the conv weight gradient with the roles of input and output grad swapped.
        o = options
        return _conv.conv2d_weight_grad(
            output_grad,
            x,
            tuple(weight.shape[2:]),
            _pair(o.stride),
            _pair(o.padding),
            _pair(o.dilation),
            o.groups,
        )

    def unfold4d(self, x, kernel_size, options: UnfoldOptions):
        o = options
        return _im2col.unfold4d(
            x, _pair(kernel_size), _pair(o.stride), _pair(o.padding), _pair(o.dilation)
        )

    # -- pooling ---------------------------------------------------------------------------------
    def avg_pool2d(self, x, kernel_size, stride, padding, count_include_pad):
        return _pool.avg_pool2d(
            x, _pair(kernel_size), _pair(stride), _pair(padding), count_include_pad
        )

    def avg_pool2d_backward(self, x, grad, kernel_size, stride, padding, count_include_pad):
        return _pool.avg_pool2d_backward(
            x, grad, _pair(kernel_size), _pair(stride), _pair(padding), count_include_pad
        )

    def max_pool2d_with_indices(self, x, kernel_size, stride, padding, dilation):
        return _pool.max_pool2d_with_indices(
            x, _pair(kernel_size), _pair(stride), _pair(padding), _pair(dilation), self.int_dtype.np
        )

    def max_pool2d_with_indices_backward(
        self, x, kernel_size, stride, padding, dilation, output_grad, indices
    ):
        return _pool.max_pool2d_backward(x, output_grad, indices)

    def adaptive_avg_pool2d(self, x, output_size):
        return _pool.adaptive_avg_pool2d(x, _pair(output_size))

    def adaptive_avg_pool2d_backward(self, x, grad):
        return _pool.adaptive_avg_pool2d_backward(x, grad)

    # -- interpolation -----------------------------------------------------------------------------
    def interpolate(self, x, output_size, options: InterpolateOptions):
        return interpolation.interpolate(x, _pair(output_size), options.mode)

    def interpolate_backward(self, x, grad, output_size, options: InterpolateOptions):
        return interpolation.interpolate_backward(x, grad, _pair(output_size), options.mode)
