"""The shape, kind and device checks of the conv ops (`module`, `_module_3d`): each bad input
gets a `TensorCheckError` naming the op and what is wrong; conv2d's shape part once per signature."""

from __future__ import annotations

from . import _check as check
from ._dtype import Float
from ._errors import TensorCheckError


def _input(op, x, spatial):
    check.float_(op, x)
    if len(x._p.shape) != spatial + 2:
        raise TensorCheckError(
            op, f"expected a rank-{spatial + 2} input [batch, channels, ...], got {x.dims()}"
        )


def _params_on_input(x, weight, bias, problems) -> None:
    """Weight and bias (if any) must be Float tensors on the input's device."""
    for t in (weight, bias):
        if t is not None and (t._d is not x._d or t._o.kind is not Float):
            problems.append(
                f"weight/bias must be Float tensors on the input's device; input is "
                f"{check.describe(x)}, got {t._o.kind.value} {check.describe(t)}"
            )


def _conv_checks(op, x, weight, bias, spatial, groups, transposed):
    _input(op, x, spatial)
    problems = []
    # Shapes read once as tuples (not `dims()` lists): these checks run on every conv call.
    ws = weight._p.shape
    if len(ws) != spatial + 2:
        problems.append(f"weight must have rank {spatial + 2}, got {list(ws)}")
    elif groups < 1:
        problems.append(f"groups must be >= 1, got {groups}")
    else:
        c_in = x._p.shape[1]
        if transposed:
            if ws[0] != c_in:
                problems.append(
                    f"weight {list(ws)} expects {ws[0]} input channels, input has {c_in}"
                )
            c_out = ws[1] * groups
        else:
            if c_in % groups or ws[1] * groups != c_in:
                problems.append(
                    f"input channels {c_in} != weight in-channels {ws[1]} x groups {groups}"
                )
            c_out = ws[0]
            if c_out % groups:
                problems.append(f"out channels {c_out} not divisible by groups {groups}")
        if bias is not None and tuple(bias._p.shape) != (c_out,):
            problems.append(f"bias must be [{c_out}], got {bias.dims()}")
    _params_on_input(x, weight, bias, problems)
    if problems:
        raise TensorCheckError(op, problems)


def _conv_out(op, x, weight, stride, padding, dilation, spatial):
    xs, ws = x._p.shape, weight._p.shape
    for d in range(spatial):
        size = xs[2 + d] + 2 * padding[d] - dilation[d] * (ws[2 + d] - 1) - 1
        if size < 0 or stride[d] < 1 or dilation[d] < 1 or padding[d] < 0:
            raise TensorCheckError(
                op,
                f"kernel {list(ws[2:])} (dilation {list(dilation)}) does not fit input "
                f"{list(xs[2:])} with padding {list(padding)} / stride {list(stride)}",
            )


# (input, weight, bias shapes, options) of conv2d calls whose shape checks passed: a model
# repeats a few dozen, and the checks cost ~2 us of a ~7 us call. Kinds and devices (per
# tensor, not per shape) are checked at every call.
_CONV2D_SHAPES_OK: dict = {}
_CONV2D_SHAPES_MAX = 512


def _conv2d_checks(x, weight, bias, o) -> None:
    """conv2d's checks (`_conv_checks`, `_conv_out`), the shape part once per signature."""
    try:
        key = (x._p.shape, weight._p.shape, None if bias is None else bias._p.shape, o)
        seen = key in _CONV2D_SHAPES_OK
    except TypeError:  # shapes or options holding lists
        key, seen = None, False
    if (
        seen
        and x._o.kind is Float
        and weight._d is x._d
        and weight._o.kind is Float
        and (bias is None or (bias._d is x._d and bias._o.kind is Float))
    ):
        return
    _conv_checks("conv2d", x, weight, bias, 2, o.groups, False)
    _conv_out("conv2d", x, weight, o.stride, o.padding, o.dilation, 2)
    if key is not None:
        if len(_CONV2D_SHAPES_OK) >= _CONV2D_SHAPES_MAX:
            _CONV2D_SHAPES_OK.clear()
        _CONV2D_SHAPES_OK[key] = True
