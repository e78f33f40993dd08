"""Functional neural-network ops (Burn's `burn::tensor::module`).

Spatial options take one int per spatial dim (`stride=[2, 2]`) or a single int applied to all.
Layouts are channels-first: 1-D `[batch, channels, length]`, 2-D `[batch, channels, height, width]`.

Example:
    >>> from burn_tensor import Tensor, module
    >>> x = Tensor.ones([1, 1, 4, 4]); w = Tensor.ones([1, 1, 3, 3])
    >>> module.conv2d(x, w, None, stride=[1, 1], padding=[1, 1]).dims()
    [1, 1, 4, 4]
"""

from __future__ import annotations

import numbers

from . import _check as check
from . import _check_data as check_data
from ._autocast import half_op
from ._dtype import Int
from ._errors import TensorCheckError
from ._module_attention import attention
from ._module_conv_checks import (  # re-exported: `_module_3d` imports them from here
    _conv2d_checks,
    _conv_checks,
    _conv_out,
    _input,
    _params_on_input,
)
from ._module_linear import linear
from ._module_norm import layer_norm
from ._options import ConvOptions, ConvTransposeOptions, InterpolateOptions, UnfoldOptions


def _tuple(op, name, v, n):
    if isinstance(v, int):
        v = (v,) * n
    v = tuple(int(x) for x in v)
    if len(v) != n:
        raise TensorCheckError(op, f"{name} needs {n} values, got {list(v)}")
    return v


@half_op(bias_axis=1)
def conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, *, options=None):
    """Shapes: x [n, c_in, l], weight [c_out, c_in/groups, k], bias [c_out] -> [n, c_out, l_out]."""
    o = options or ConvOptions(
        _tuple("conv1d", "stride", stride, 1),
        _tuple("conv1d", "padding", padding, 1),
        _tuple("conv1d", "dilation", dilation, 1),
        groups,
    )
    _conv_checks("conv1d", x, weight, bias, 1, o.groups, False)
    _conv_out("conv1d", x, weight, o.stride, o.padding, o.dilation, 1)
    w = _dequantized(x, weight)  # a quantized weight runs dequantized (weight-only)
    b = None if bias is None else _dequantized(x, bias)
    return x._like(x._d.backend.conv1d(x._p, w, b, o))


@half_op(bias_axis=1)
def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, *, options=None):
    """Shapes: x [n, c_in, h, w], weight [c_out, c_in/groups, kh, kw], bias [c_out] -> [n, c_out, h', w']."""
    o = options or ConvOptions(
        _tuple("conv2d", "stride", stride, 2),
        _tuple("conv2d", "padding", padding, 2),
        _tuple("conv2d", "dilation", dilation, 2),
        groups,
    )
    _conv2d_checks(x, weight, bias, o)
    b = None if bias is None else _dequantized(x, bias)
    if weight.is_quantized():  # the backend's quantized conv (default: dequantize, conv2d)
        return x._like(x._d.backend.q_conv2d(x._p, weight._p, b, o))
    return x._like(x._d.backend.conv2d(x._p, weight._p, b, o))


@half_op(bias_axis=1)
def conv_transpose1d(
    x, weight, bias=None, stride=1, padding=0, padding_out=0, dilation=1, groups=1, *, options=None
):
    """Shapes: x [n, c_in, l], weight [c_in, c_out/groups, k] -> [n, c_out, l_out]."""
    o = options or ConvTransposeOptions(
        _tuple("conv_transpose1d", "stride", stride, 1),
        _tuple("conv_transpose1d", "padding", padding, 1),
        _tuple("conv_transpose1d", "padding_out", padding_out, 1),
        _tuple("conv_transpose1d", "dilation", dilation, 1),
        groups,
    )
    _conv_checks("conv_transpose1d", x, weight, bias, 1, o.groups, True)
    return x._like(
        x._d.backend.conv_transpose1d(x._p, weight._p, None if bias is None else bias._p, o)
    )


@half_op(bias_axis=1)
def conv_transpose2d(
    x, weight, bias=None, stride=1, padding=0, padding_out=0, dilation=1, groups=1, *, options=None
):
    """Shapes: x [n, c_in, h, w], weight [c_in, c_out/groups, kh, kw] -> [n, c_out, h', w']."""
    o = options or ConvTransposeOptions(
        _tuple("conv_transpose2d", "stride", stride, 2),
        _tuple("conv_transpose2d", "padding", padding, 2),
        _tuple("conv_transpose2d", "padding_out", padding_out, 2),
        _tuple("conv_transpose2d", "dilation", dilation, 2),
        groups,
    )
    _conv_checks("conv_transpose2d", x, weight, bias, 2, o.groups, True)
    for d in range(2):
        if o.padding_out[d] >= max(o.stride[d], o.dilation[d]):
            raise TensorCheckError(
                "conv_transpose2d",
                f"padding_out {list(o.padding_out)} must be < stride or dilation",
            )
    return x._like(
        x._d.backend.conv_transpose2d(x._p, weight._p, None if bias is None else bias._p, o)
    )


def _pool_checks(op, x, kernel, stride, padding, spatial, dilation=None):
    _input(op, x, spatial)
    dilation = dilation or (1,) * spatial
    for d in range(spatial):
        if kernel[d] < 1 or stride[d] < 1 or padding[d] < 0:
            raise TensorCheckError(
                op,
                f"kernel {list(kernel)}, stride {list(stride)}, padding {list(padding)} must be positive",
            )
        if padding[d] * 2 > kernel[d]:
            raise TensorCheckError(
                op, f"padding {list(padding)} must be at most half the kernel {list(kernel)}"
            )
        if x.dims()[2 + d] + 2 * padding[d] < dilation[d] * (kernel[d] - 1) + 1:
            raise TensorCheckError(
                op, f"kernel {list(kernel)} larger than padded input {x.dims()[2:]}"
            )


def avg_pool1d(x, kernel_size, stride=None, padding=0, count_include_pad=True):
    k = _tuple("avg_pool1d", "kernel_size", kernel_size, 1)
    s = _tuple("avg_pool1d", "stride", stride if stride is not None else k, 1)
    p = _tuple("avg_pool1d", "padding", padding, 1)
    _pool_checks("avg_pool1d", x, k, s, p, 1)
    return x._like(x._d.backend.avg_pool1d(x._p, k[0], s[0], p[0], count_include_pad))


def avg_pool2d(x, kernel_size, stride=None, padding=0, count_include_pad=True):
    """Shapes: [n, c, h, w] -> [n, c, h', w']; stride defaults to the kernel size."""
    k = _tuple("avg_pool2d", "kernel_size", kernel_size, 2)
    s = _tuple("avg_pool2d", "stride", stride if stride is not None else k, 2)
    p = _tuple("avg_pool2d", "padding", padding, 2)
    _pool_checks("avg_pool2d", x, k, s, p, 2)
    return x._like(x._d.backend.avg_pool2d(x._p, k, s, p, count_include_pad))


def _max_pool1d_args(x, kernel_size, stride, padding, dilation):
    k = _tuple("max_pool1d", "kernel_size", kernel_size, 1)
    s = _tuple("max_pool1d", "stride", stride if stride is not None else k, 1)
    p = _tuple("max_pool1d", "padding", padding, 1)
    dl = _tuple("max_pool1d", "dilation", dilation, 1)
    _pool_checks("max_pool1d", x, k, s, p, 1, dl)
    return k[0], s[0], p[0], dl[0]


def max_pool1d_with_indices(x, kernel_size, stride=None, padding=0, dilation=1):
    args = _max_pool1d_args(x, kernel_size, stride, padding, dilation)
    out, idx = x._d.backend.max_pool1d_with_indices(x._p, *args)
    return x._like(out), x._as(idx, Int)


def max_pool1d(x, kernel_size, stride=None, padding=0, dilation=1):
    """Shapes: [n, c, l] -> [n, c, l']; stride defaults to the kernel size."""
    args = _max_pool1d_args(x, kernel_size, stride, padding, dilation)
    return x._like(x._d.backend.max_pool1d(x._p, *args))


def max_pool2d_with_indices(x, kernel_size, stride=None, padding=0, dilation=1):
    """Max pooling and the flat (h * w) index of each max in its input plane."""
    k = _tuple("max_pool2d", "kernel_size", kernel_size, 2)
    s = _tuple("max_pool2d", "stride", stride if stride is not None else k, 2)
    p = _tuple("max_pool2d", "padding", padding, 2)
    dl = _tuple("max_pool2d", "dilation", dilation, 2)
    _pool_checks("max_pool2d", x, k, s, p, 2, dl)
    out, idx = x._d.backend.max_pool2d_with_indices(x._p, k, s, p, dl)
    return x._like(out), x._as(idx, Int)


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1):
    """Shapes: [n, c, h, w] -> [n, c, h', w']."""
    k = _tuple("max_pool2d", "kernel_size", kernel_size, 2)
    s = _tuple("max_pool2d", "stride", stride if stride is not None else k, 2)
    p = _tuple("max_pool2d", "padding", padding, 2)
    dl = _tuple("max_pool2d", "dilation", dilation, 2)
    _pool_checks("max_pool2d", x, k, s, p, 2, dl)
    return x._like(x._d.backend.max_pool2d(x._p, k, s, p, dl))


def adaptive_avg_pool1d(x, output_size: int):
    _input("adaptive_avg_pool1d", x, 1)
    if output_size < 1:
        raise TensorCheckError(
            "adaptive_avg_pool1d", f"output_size must be >= 1, got {output_size}"
        )
    return x._like(x._d.backend.adaptive_avg_pool1d(x._p, int(output_size)))


def adaptive_avg_pool2d(x, output_size):
    """Shapes: [n, c, h, w] -> [n, c, oh, ow] (windows as torch: floor/ceil of proportional bounds)."""
    _input("adaptive_avg_pool2d", x, 2)
    o = _tuple("adaptive_avg_pool2d", "output_size", output_size, 2)
    if min(o) < 1:
        raise TensorCheckError("adaptive_avg_pool2d", f"output_size must be >= 1, got {list(o)}")
    return x._like(x._d.backend.adaptive_avg_pool2d(x._p, o))


def interpolate(x, output_size, options: InterpolateOptions | str = "nearest"):
    """Resize `[n, c, h, w]` to `output_size` (nearest, bilinear or bicubic; align_corners=True)."""
    _input("interpolate", x, 2)
    o = _tuple("interpolate", "output_size", output_size, 2)
    if min(o) < 1:
        raise TensorCheckError("interpolate", f"output_size must be >= 1, got {list(o)}")
    opts = options if isinstance(options, InterpolateOptions) else InterpolateOptions(options)
    return x._like(x._d.backend.interpolate(x._p, o, opts))


def embedding(weights, indices):
    """Shapes: weights [vocab, d_model], indices Int [batch, seq] -> [batch, seq, d_model]."""
    check.float_("embedding", weights)
    check.int_indices("embedding", indices)
    if weights.rank() != 2 or indices.rank() != 2:
        raise TensorCheckError(
            "embedding",
            f"expected weights [vocab, d] and indices [batch, seq], got {weights.dims()} and {indices.dims()}",
        )
    check_data.indices_in_range("embedding", indices, 0, weights.dims()[0], "token index")
    if weights.is_quantized():  # rows of a quantized table are dequantized, the output is float
        weights = weights.dequantize()
    return weights._like(weights._d.backend.embedding(weights._p, indices._p))


def dropout(x, prob: float):
    """x with each element zeroed with probability `prob` and the rest scaled by 1 / (1 - prob),
    as one backend op (`dropout`; under Autodiff one node, whose backward multiplies by the
    same mask). The mask is the device's bernoulli(1 - prob) draw in x's dtype: the values
    `x * Tensor.random(shape, Distribution.bernoulli(1 - prob)) * (1 / (1 - prob))` gives.
    `prob` 0 returns x; 1 zeros (no draw).

    Shapes: any -> same.

    Example:
        >>> y = dropout(x, 0.1)  # training-time dropout; `nn.Dropout` calls it  # doctest: +SKIP
    """
    check.float_("dropout", x)
    if isinstance(prob, bool) or not isinstance(prob, numbers.Real) or not 0.0 <= prob <= 1.0:
        raise TensorCheckError("dropout", f"prob must be a number in [0, 1], got {prob!r}")
    if prob == 0.0:
        return x
    if prob == 1.0:
        return x.zeros_like()
    return x._like(x._d.backend.dropout(x._p, float(prob))[0])


def unfold4d(x, kernel_size, stride=1, padding=0, dilation=1):
    """im2col. Shapes: [n, c, h, w] -> [n, c * kh * kw, l] with l the number of windows."""
    _input("unfold4d", x, 2)
    k = _tuple("unfold4d", "kernel_size", kernel_size, 2)
    opts = UnfoldOptions(
        _tuple("unfold4d", "stride", stride, 2),
        _tuple("unfold4d", "padding", padding, 2),
        _tuple("unfold4d", "dilation", dilation, 2),
    )
    return x._like(x._d.backend.unfold4d(x._p, k, opts))


from ._module_ctc import ctc_loss  # noqa: E402  (Burn 0.21's module::ctc_loss)
from ._module_rnn import rnn_sequence  # noqa: E402, F401  (ONNX RNN/GRU/LSTM layers)


def _dequantized(x, weight):
    """A parameter's primitive, dequantized to the input's float dtype when it is quantized."""
    if not weight.is_quantized():
        return weight._p
    from ._dtype import DType

    return x._d.backend.q_dequantize(weight._p, DType.from_np(x._p.dtype))


# after `conv2d` and `_dequantized`, which it reads
from ._module_conv_act import activation_spec, conv2d_activation  # noqa: E402, F401  (conv + activation)

from ._module_3d import (  # noqa: E402  (3-D ops and deform_conv2d, Burn 0.20)
    adaptive_avg_pool3d,
    avg_pool3d,
    conv3d,
    conv_transpose3d,
    deform_conv2d,
    max_pool3d,
    max_pool3d_with_indices,
)
from ._ops_deform import DeformConvOptions  # noqa: E402

__all__ = [
    "attention",
    "ctc_loss",
    "rnn_sequence",
    "layer_norm",
    "conv1d",
    "conv2d",
    "conv2d_activation",
    "activation_spec",
    "conv3d",
    "conv_transpose3d",
    "avg_pool3d",
    "max_pool3d",
    "max_pool3d_with_indices",
    "adaptive_avg_pool3d",
    "deform_conv2d",
    "DeformConvOptions",
    "conv_transpose1d",
    "conv_transpose2d",
    "avg_pool1d",
    "avg_pool2d",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "interpolate",
    "embedding",
    "dropout",
    "unfold4d",
    "linear",
]
