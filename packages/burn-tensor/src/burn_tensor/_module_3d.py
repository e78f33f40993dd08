"""3-D module functions and `deform_conv2d` (Burn's `burn::tensor::module::{conv3d,
conv_transpose3d, avg_pool3d, max_pool3d, max_pool3d_with_indices, adaptive_avg_pool3d,
deform_conv2d}`): argument checks, then the backend ops of `_ops_module3d.py` / `_ops_deform.py`.

Layouts are channels-first: `[batch, channels, depth, height, width]`.
"""

from __future__ import annotations

from ._autocast import half_op
from ._dtype import Float, Int
from ._errors import TensorCheckError
from ._ops_deform import DeformConvOptions
from ._options import ConvOptions, ConvTransposeOptions
from .module import (
    _conv_checks,
    _conv_out,
    _dequantized,
    _input,
    _params_on_input,
    _pool_checks,
    _tuple,
)


@half_op(bias_axis=1)
def conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, *, options=None):
    """Shapes: x [n, c_in, d, h, w], weight [c_out, c_in/groups, kd, kh, kw], bias [c_out]
    -> [n, c_out, d', h', w'] with d' = (d + 2p - dilation * (kd - 1) - 1) // stride + 1.

    Example:
        >>> from burn_tensor import Tensor, module
        >>> module.conv3d(Tensor.ones([1, 2, 4, 4, 4]), Tensor.ones([3, 2, 3, 3, 3]),
        ...               padding=1).dims()
        [1, 3, 4, 4, 4]
    """
    op = "conv3d"
    o = options or ConvOptions(
        _tuple(op, "stride", stride, 3),
        _tuple(op, "padding", padding, 3),
        _tuple(op, "dilation", dilation, 3),
        groups,
    )
    _conv_checks(op, x, weight, bias, 3, o.groups, False)
    _conv_out(op, x, weight, o.stride, o.padding, o.dilation, 3)
    w = _dequantized(x, weight)  # a quantized weight runs dequantized (weight-only)
    b = None if bias is None else _dequantized(x, bias)
    return x._like(x._d.backend.conv3d(x._p, w, b, o))


@half_op(bias_axis=1)
def conv_transpose3d(
    x, weight, bias=None, stride=1, padding=0, padding_out=0, dilation=1, groups=1, *, options=None
):
    """Shapes: x [n, c_in, d, h, w], weight [c_in, c_out/groups, kd, kh, kw] -> [n, c_out, d', h',
    w'] with d' = (d - 1) * stride - 2 * padding + dilation * (kd - 1) + padding_out + 1."""
    op = "conv_transpose3d"
    o = options or ConvTransposeOptions(
        _tuple(op, "stride", stride, 3),
        _tuple(op, "padding", padding, 3),
        _tuple(op, "padding_out", padding_out, 3),
        _tuple(op, "dilation", dilation, 3),
        groups,
    )
    _conv_checks(op, x, weight, bias, 3, o.groups, True)
    ws = weight._p.shape
    for d in range(3):
        if o.stride[d] < 1 or o.dilation[d] < 1 or o.padding[d] < 0 or o.padding_out[d] < 0:
            raise TensorCheckError(
                op, f"stride {list(o.stride)} / dilation {list(o.dilation)} must be >= 1 and "
                f"padding {list(o.padding)} / padding_out {list(o.padding_out)} >= 0"
            )
        if o.padding_out[d] >= max(o.stride[d], o.dilation[d]):
            raise TensorCheckError(
                op, f"padding_out {list(o.padding_out)} must be < stride or dilation"
            )
        size = (x._p.shape[2 + d] - 1) * o.stride[d] - 2 * o.padding[d]
        size += o.dilation[d] * (ws[2 + d] - 1) + o.padding_out[d] + 1
        if size < 1:
            raise TensorCheckError(
                op, f"padding {list(o.padding)} leaves no output for input {x.dims()[2:]} and "
                f"kernel {list(ws[2:])}"
            )
    w = _dequantized(x, weight)  # a quantized weight runs dequantized (weight-only)
    b = None if bias is None else _dequantized(x, bias)
    return x._like(x._d.backend.conv_transpose3d(x._p, w, b, o))


def _pool3d_args(op, x, kernel_size, stride, padding, dilation=1):
    k = _tuple(op, "kernel_size", kernel_size, 3)
    s = _tuple(op, "stride", stride if stride is not None else k, 3)
    p = _tuple(op, "padding", padding, 3)
    dl = _tuple(op, "dilation", dilation, 3)
    _pool_checks(op, x, k, s, p, 3, dl)
    if min(dl) < 1:
        raise TensorCheckError(op, f"dilation must be >= 1, got {list(dl)}")
    return k, s, p, dl


def avg_pool3d(x, kernel_size, stride=None, padding=0, count_include_pad=True):
    """Shapes: [n, c, d, h, w] -> [n, c, d', h', w']; stride defaults to the kernel size;
    `count_include_pad=False` divides by the window's in-image elements only."""
    k, s, p, _ = _pool3d_args("avg_pool3d", x, kernel_size, stride, padding)
    return x._like(x._d.backend.avg_pool3d(x._p, k, s, p, bool(count_include_pad)))


def max_pool3d(x, kernel_size, stride=None, padding=0, dilation=1):
    """Shapes: [n, c, d, h, w] -> [n, c, d', h', w']; padding counts as -inf."""
    args = _pool3d_args("max_pool3d", x, kernel_size, stride, padding, dilation)
    return x._like(x._d.backend.max_pool3d(x._p, *args))


def max_pool3d_with_indices(x, kernel_size, stride=None, padding=0, dilation=1):
    """Max pooling and the flat (d * h * w) index of each max in its input volume (Int)."""
    args = _pool3d_args("max_pool3d", x, kernel_size, stride, padding, dilation)
    out, idx = x._d.backend.max_pool3d_with_indices(x._p, *args)
    return x._like(out), x._as(idx, Int)


def adaptive_avg_pool3d(x, output_size):
    """Shapes: [n, c, d, h, w] -> [n, c, od, oh, ow] (windows as torch: floor/ceil of the
    proportional bounds)."""
    op = "adaptive_avg_pool3d"
    _input(op, x, 3)
    o = _tuple(op, "output_size", output_size, 3)
    if min(o) < 1:
        raise TensorCheckError(op, f"output_size must be >= 1, got {list(o)}")
    return x._like(x._d.backend.adaptive_avg_pool3d(x._p, o))


def deform_conv2d(x, offset, weight, mask=None, bias=None, stride=1, padding=0, dilation=1,
                  weight_groups=1, offset_groups=1, *, options=None):
    """Deformable convolution v1/v2 (torchvision's `deform_conv2d`; Burn's
    `module::deform_conv2d`).

    Shapes: x [n, c_in, h, w]; offset [n, 2 * offset_groups * kh * kw, h', w'] (per tap a row
    then a column shift); weight [c_out, c_in / weight_groups, kh, kw]; mask [n, offset_groups *
    kh * kw, h', w'] or None (v1); bias [c_out] or None -> [n, c_out, h', w'], where h', w' are
    the ordinary convolution's output size.
    """
    op = "deform_conv2d"
    o = options or DeformConvOptions(
        _tuple(op, "stride", stride, 2),
        _tuple(op, "padding", padding, 2),
        _tuple(op, "dilation", dilation, 2),
        int(weight_groups),
        int(offset_groups),
    )
    _input(op, x, 2)
    problems = []
    xs, ws = x._p.shape, weight._p.shape
    gw, go = o.weight_groups, o.offset_groups
    if len(ws) != 4:
        raise TensorCheckError(op, f"weight must have rank 4, got {list(ws)}")
    if gw < 1 or go < 1:
        raise TensorCheckError(op, f"weight_groups {gw} and offset_groups {go} must be >= 1")
    c_in, c_out, kh, kw = xs[1], ws[0], ws[2], ws[3]
    if c_in % gw or ws[1] * gw != c_in:
        problems.append(f"input channels {c_in} != weight in-channels {ws[1]} x weight_groups {gw}")
    if c_out % gw:
        problems.append(f"out channels {c_out} not divisible by weight_groups {gw}")
    if c_in % go:
        problems.append(f"input channels {c_in} not divisible by offset_groups {go}")
    _conv_out(op, x, weight, o.stride, o.padding, o.dilation, 2)
    out_hw = tuple(
        (xs[2 + d] + 2 * o.padding[d] - o.dilation[d] * (ws[2 + d] - 1) - 1) // o.stride[d] + 1
        for d in range(2)
    )
    want_off = (xs[0], 2 * go * kh * kw) + out_hw
    if offset._o.kind is not Float or tuple(offset._p.shape) != want_off:
        problems.append(f"offset must be Float {list(want_off)}, got {offset.dims()}")
    if mask is not None:
        want_mask = (xs[0], go * kh * kw) + out_hw
        if mask._o.kind is not Float or tuple(mask._p.shape) != want_mask:
            problems.append(f"mask must be Float {list(want_mask)}, got {mask.dims()}")
    if bias is not None and tuple(bias._p.shape) != (c_out,):
        problems.append(f"bias must be [{c_out}], got {bias.dims()}")
    _params_on_input(x, weight, bias, problems)
    for name, t in (("offset", offset), ("mask", mask)):
        if t is not None and t._d is not x._d:
            problems.append(f"{name} must be on the input's device")
    if problems:
        raise TensorCheckError(op, problems)
    p = x._d.backend.deform_conv2d(
        x._p,
        offset._p,
        _dequantized(x, weight),
        None if mask is None else mask._p,
        None if bias is None else _dequantized(x, bias),
        o,
    )
    return x._like(p)
