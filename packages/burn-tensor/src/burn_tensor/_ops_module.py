"""Module ops (linear, convolution, pooling, interpolation, embedding) and their backward primitives.

Required: conv2d, conv_transpose2d, avg_pool2d(+backward), max_pool2d_with_indices(+backward),
adaptive_avg_pool2d(+backward), interpolate(+backward). Everything else here is a default written with
those and the float ops: linear is a matmul and a broadcast add over the flattened leading dims
(its backward primitives matmuls with a transposed operand and a sum), 1-D variants reshape to 2-D, conv backward passes are transposed
convolutions or unfold + matmul, embedding is select / select_assign. The 1-D pools have no backward
ops of their own: Autodiff differentiates their reshape-to-2-D default through the 2-D ones, so a
1-D backward op would never be called.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ._autocast import FLOAT_WIDTH
from ._data import TensorData
from ._dtype import DType
from ._options import ConvOptions, ConvTransposeOptions, UnfoldOptions


def _dt(x):
    return DType.from_np(x.dtype)


@functools.lru_cache(maxsize=64)
def _bernoulli(keep: float):
    """`Distribution.bernoulli(keep)`, built once per probability (a model's dropout layers
    ask for the same one at every step)."""
    from ._distribution import Distribution

    return Distribution.bernoulli(keep)


def _transposed_input_size(weight, output_grad, options, exact=True):
    """Spatial size of a transposed conv's input, from its output (exact) or, with exact=False, the
    number of windows a strided conv over the output yields (larger when padding_out >= stride)."""
    size = []
    for d in range(2):
        span = output_grad.shape[2 + d] + 2 * options.padding[d] - 1
        span -= options.dilation[d] * (weight.shape[2 + d] - 1)
        if exact:
            span -= options.padding_out[d]
        size.append(span // options.stride[d] + 1)
    return tuple(size)


def _linear_dims(x, weight):
    """(leading shape, d_in, d_out, rows) of `linear`'s input or output gradient `x` against
    weight [d_in, d_out]."""
    d_in, d_out = weight.shape
    lead = tuple(x.shape[:-1])
    return lead, d_in, d_out, math.prod(lead)


def _crop(shape, spatial):
    return (slice(0, shape[0], 1), slice(0, shape[1], 1)) + tuple(slice(0, s, 1) for s in spatial)


class ModuleOps:
    # -- linear ----------------------------------------------------------------------------------
    # One op and three backward primitives (as the convolutions), so a training step's linear
    # layer is one recorded node instead of unsqueeze + matmul + add (and transposes, a reduction
    # and reshapes in its backward), and a backend can run it as GEMMs reading transposed
    # operands in place. Defaults: the same ops a composition would run.
    def linear(self, x, weight, bias):
        """x [..., d_in] @ weight [d_in, d_out] (+ bias [d_out]; None: none) -> [..., d_out],
        as one matmul over the flattened leading dims and a broadcast add."""
        lead, d_in, d_out, m = _linear_dims(x, weight)
        out = self.float_matmul(self._rows(x, m, d_in), weight)
        if bias is not None:
            out = self.float_add(out, self.float_reshape(bias, (1, d_out)))
        return out if len(lead) == 1 else self.float_reshape(out, lead + (d_out,))

    def linear_x_backward(self, weight, output_grad):
        """Gradient of `linear` for x: output_grad [..., d_out] @ weight^T -> [..., d_in]."""
        lead, d_in, d_out, m = _linear_dims(output_grad, weight)
        g = self._rows(output_grad, m, d_out)
        dx = self.float_matmul(g, self.float_swap_dims(weight, 0, 1))
        return dx if len(lead) == 1 else self.float_reshape(dx, lead + (d_in,))

    def linear_weight_backward(self, x, output_grad):
        """Gradient of `linear` for weight: x^T @ output_grad over the flattened leading dims
        -> [d_in, d_out]."""
        d_in, d_out = x.shape[-1], output_grad.shape[-1]
        m = math.prod(x.shape[:-1])
        x2 = self._rows(x, m, d_in)
        return self.float_matmul(self.float_swap_dims(x2, 0, 1), self._rows(output_grad, m, d_out))

    def linear_bias_backward(self, output_grad):
        """Gradient of `linear` for bias: output_grad summed over every leading dim -> [d_out]."""
        d_out = output_grad.shape[-1]
        m = math.prod(output_grad.shape[:-1])
        g = self._rows(output_grad, m, d_out)
        return self.float_reshape(self.float_sum_dim(g, 0), (d_out,))

    def linear_weight_bias_backward(self, x, output_grad):
        """Gradients of `linear` for weight and bias together -> (dweight [d_in, d_out],
        dbias [d_out]): one op where a backend computes both in one pass (Cuda: the bias
        gradient as the weight GEMM's epilogue); by default the two ops above."""
        return self.linear_weight_backward(x, output_grad), self.linear_bias_backward(output_grad)

    def linear_half(self, x, weight, bias, dtype):
        """Autocast's linear (`burn_tensor.autocast`): x and weight cast to the half `dtype`,
        their product in it, widened to the widest float dtype of x, weight and bias, then
        + bias in that dtype -> (out, x_half, weight_half). The half copies are what the
        gradient reads (`linear_half_backward`), so Autodiff keeps them and never the wide
        inputs. This default is the ops autocast ran before it was one op (a cast each, the
        half linear, the widening cast, the broadcast add); a backend may run it as one GEMM
        reading half operands and writing the wide output with the bias in its epilogue (Cuda).

        Shapes: x [..., d_in], weight [d_in, d_out], bias [d_out] or None -> out [..., d_out].
        """
        dts = [_dt(x), _dt(weight)] + ([] if bias is None else [_dt(bias)])
        wide = min(dts, key=FLOAT_WIDTH.__getitem__)
        xh = x if dts[0] is dtype else self.float_cast(x, dtype)
        wh = weight if dts[1] is dtype else self.float_cast(weight, dtype)
        out = self.linear(xh, wh, None)
        if wide is not dtype:
            out = self.float_cast(out, wide)
        if bias is not None:
            b = bias if dts[2] is wide else self.float_cast(bias, wide)
            view = (1,) * (len(out.shape) - 1) + (weight.shape[1],)
            out = self.float_add(out, self.float_reshape(b, view))
        return out, xh, wh

    def linear_half_backward(self, x_half, weight_half, output_grad, dtypes):
        """Gradients of `linear_half` -> (dx, dweight, dbias), each in its input's dtype from
        `dtypes` (x's, weight's, bias's; None: that gradient is not wanted and is None). The
        wide output gradient is cast to the half dtype for the two products (as torch's
        autocast differentiates its half GEMM); the bias gradient is its sums in the wide
        dtype (the bias was added there).

        Shapes: x_half [..., d_in], weight_half [d_in, d_out], output_grad [..., d_out]."""
        x_dt, w_dt, b_dt = dtypes
        h = _dt(x_half)
        gh = output_grad if _dt(output_grad) is h else self.float_cast(output_grad, h)
        gx = gw = gb = None
        if x_dt is not None:
            gx = self.linear_x_backward(weight_half, gh)
            gx = gx if x_dt is h else self.float_cast(gx, x_dt)
        if w_dt is not None:
            gw = self.linear_weight_backward(x_half, gh)
            gw = gw if w_dt is h else self.float_cast(gw, w_dt)
        if b_dt is not None:
            gb = self.linear_bias_backward(output_grad)
            gb = gb if _dt(gb) is b_dt else self.float_cast(gb, b_dt)
        return gx, gw, gb

    def dropout(self, x, prob):
        """(out, mask) of dropout with probability `prob` in (0, 1): mask = bernoulli(1 - prob)
        drawn from the device's generator in x's dtype, times 1 / (1 - prob); out = x * mask.
        The three ops `Dropout` ran before it was one op (the same draws and roundings); a
        backend may run it in one pass (Cuda). The mask is what the gradient multiplies by.

        Shapes: x any -> (out, mask) of x's shape and dtype."""
        keep = 1.0 - prob
        mask = self.float_random(tuple(x.shape), _bernoulli(keep), self.device_of(x), _dt(x))
        mask = self.float_mul_scalar(mask, 1.0 / keep)
        return self.float_mul(x, mask), mask

    def _rows(self, x, m, d):
        """x as [m, d] (itself when it already is one)."""
        return x if len(x.shape) == 2 else self.float_reshape(x, (m, d))

    # -- 1-D through 2-D ------------------------------------------------------------------------
    def conv1d(self, x, weight, bias, options: ConvOptions):
        x2 = self.float_reshape(x, tuple(x.shape) + (1,))
        w2 = self.float_reshape(weight, tuple(weight.shape) + (1,))
        o = ConvOptions(
            (options.stride[0], 1),
            (options.padding[0], 0),
            (options.dilation[0], 1),
            options.groups,
        )
        out = self.conv2d(x2, w2, bias, o)
        return self.float_reshape(out, tuple(out.shape[:3]))

    def conv_transpose1d(self, x, weight, bias, options: ConvTransposeOptions):
        x2 = self.float_reshape(x, tuple(x.shape) + (1,))
        w2 = self.float_reshape(weight, tuple(weight.shape) + (1,))
        o = ConvTransposeOptions(
            (options.stride[0], 1),
            (options.padding[0], 0),
            (options.padding_out[0], 0),
            (options.dilation[0], 1),
            options.groups,
        )
        out = self.conv_transpose2d(x2, w2, bias, o)
        return self.float_reshape(out, tuple(out.shape[:3]))

    def avg_pool1d(self, x, kernel_size, stride, padding, count_include_pad):
        x2 = self.float_reshape(x, tuple(x.shape) + (1,))
        out = self.avg_pool2d(x2, (kernel_size, 1), (stride, 1), (padding, 0), count_include_pad)
        return self.float_reshape(out, tuple(out.shape[:3]))

    def max_pool1d_with_indices(self, x, kernel_size, stride, padding, dilation):
        x2 = self.float_reshape(x, tuple(x.shape) + (1,))
        out, idx = self.max_pool2d_with_indices(
            x2, (kernel_size, 1), (stride, 1), (padding, 0), (dilation, 1)
        )
        # 2-D flat index over (L, 1) equals the 1-D index.
        return self.float_reshape(out, tuple(out.shape[:3])), self.int_reshape(
            idx, tuple(idx.shape[:3])
        )

    def max_pool1d(self, x, kernel_size, stride, padding, dilation):
        return self.max_pool1d_with_indices(x, kernel_size, stride, padding, dilation)[0]

    def max_pool2d(self, x, kernel_size, stride, padding, dilation):
        return self.max_pool2d_with_indices(x, kernel_size, stride, padding, dilation)[0]

    def adaptive_avg_pool1d(self, x, output_size):
        out = self.adaptive_avg_pool2d(
            self.float_reshape(x, tuple(x.shape) + (1,)), (output_size, 1)
        )
        return self.float_reshape(out, tuple(out.shape[:3]))

    # -- convolution backward passes --------------------------------------------------------------
    def conv2d_x_backward(self, x, weight, output_grad, options: ConvOptions):
        kh, kw = weight.shape[2], weight.shape[3]
        pad_out = []
        for d, k in enumerate((kh, kw)):
            size_in = x.shape[2 + d]
            size_out = output_grad.shape[2 + d]
            full = (size_out - 1) * options.stride[d] - 2 * options.padding[d]
            full += options.dilation[d] * (k - 1) + 1
            pad_out.append(size_in - full)
        o = ConvTransposeOptions(
            options.stride, options.padding, tuple(pad_out), options.dilation, options.groups
        )
        return self.conv_transpose2d(output_grad, weight, None, o)

    def conv2d_weight_backward(self, x, weight, output_grad, options: ConvOptions):
        g = options.groups
        c_out, cin_g, kh, kw = weight.shape
        n = x.shape[0]
        cols = self.unfold4d(
            x, (kh, kw), UnfoldOptions(options.stride, options.padding, options.dilation)
        )
        # cols [n, c_in*kh*kw, L]; grad [n, c_out, L]
        length = cols.shape[2]
        cols = self.float_reshape(cols, (n, g, cin_g * kh * kw, length))
        grad = self.float_reshape(output_grad, (n, g, c_out // g, length))
        # dW[g, c_out/g, cin_g*kh*kw] = sum_n grad[n,g] @ cols[n,g]^T
        prod = self.float_matmul(grad, self.float_swap_dims(cols, 2, 3))
        dw = self.float_sum_dim(prod, 0)
        return self.float_reshape(dw, tuple(weight.shape))

    def conv2d_bias_backward(self, x, weight, bias, output_grad):
        g = self.float_sum_dim(self.float_sum_dim(self.float_sum_dim(output_grad, 0), 2), 3)
        return self.float_reshape(g, tuple(bias.shape))

    def conv_transpose2d_x_backward(self, weight, output_grad, options: ConvTransposeOptions):
        o = ConvOptions(options.stride, options.padding, options.dilation, options.groups)
        out = self.conv2d(output_grad, weight, None, o)
        # With padding_out >= stride (allowed when dilation > stride) the strided conv sees extra
        # output rows/cols that no input pixel produced: crop back to the input's size.
        size = _transposed_input_size(weight, output_grad, options)
        if tuple(out.shape[2:]) == size:
            return out
        return self.float_slice(out, _crop(out.shape, size))

    def conv_transpose2d_weight_backward(
        self, x, weight, output_grad, options: ConvTransposeOptions
    ):
        g = options.groups
        c_in, cout_g, kh, kw = weight.shape
        n = x.shape[0]
        cols = self.unfold4d(
            output_grad, (kh, kw), UnfoldOptions(options.stride, options.padding, options.dilation)
        )
        # cols [n, c_out*kh*kw, L]; keep the windows of real input pixels (see x_backward), so
        # L = h_in*w_in.
        h, w = x.shape[2], x.shape[3]
        full = _transposed_input_size(weight, output_grad, options, exact=False)
        if full != (h, w):
            cols = self.float_reshape(cols, (n, cols.shape[1]) + full)
            cols = self.float_slice(cols, _crop(cols.shape, (h, w)))
            cols = self.float_reshape(cols, (n, cols.shape[1], h * w))
        length = cols.shape[2]
        cols = self.float_reshape(cols, (n, g, cout_g * kh * kw, length))
        xs = self.float_reshape(x, (n, g, c_in // g, length))
        prod = self.float_matmul(xs, self.float_swap_dims(cols, 2, 3))
        dw = self.float_sum_dim(prod, 0)
        return self.float_reshape(dw, tuple(weight.shape))

    def conv_transpose2d_bias_backward(self, x, weight, bias, output_grad):
        return self.conv2d_bias_backward(x, weight, bias, output_grad)

    def unfold4d(self, x, kernel_size, options: UnfoldOptions):
        """im2col: [n, c, h, w] -> [n, c*kh*kw, L], as a grouped conv with one-hot kernels (Burn)."""
        n, c = x.shape[0], x.shape[1]
        kh, kw = kernel_size
        eye = np.zeros((c * kh * kw, 1, kh, kw), dtype=x.dtype)
        for ci in range(c):
            for i in range(kh):
                for j in range(kw):
                    eye[ci * kh * kw + i * kw + j, 0, i, j] = 1
        w = self.float_from_data(TensorData(eye), self.device_of(x))
        out = self.conv2d(
            x, w, None, ConvOptions(options.stride, options.padding, options.dilation, c)
        )
        return self.float_reshape(out, (n, c * kh * kw, out.shape[2] * out.shape[3]))

    # -- embedding ------------------------------------------------------------------------------
    def embedding(self, weights, indices):
        shape = tuple(indices.shape)
        flat = self.int_reshape(indices, (math.prod(shape),))
        out = self.float_select(weights, 0, flat)
        return self.float_reshape(out, shape + (weights.shape[1],))

    def embedding_backward(self, weights, output_grad, indices):
        count = math.prod(indices.shape)
        flat = self.int_reshape(indices, (count,))
        grad = self.float_reshape(output_grad, (count, weights.shape[1]))
        zeros = self.float_zeros(tuple(weights.shape), self.device_of(weights), _dt(weights))
        return self.float_select_assign(zeros, 0, flat, grad)

