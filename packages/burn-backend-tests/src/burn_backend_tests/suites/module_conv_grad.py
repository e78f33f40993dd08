"""Conformance: the convolution backward primitives, called on the backend with primitives.

conv2d_{x,weight,bias}_backward and conv_transpose2d_{x,weight,bias}_backward over the case tables
of `suites.module_conv`, each checked two ways: against the explicit float64 gradient of
`reference.conv` (kind, dtype, shape, device, values), and, for x and weight, as the adjoint of the
forward op: <conv(x, w), g> == <x, x_backward(g)> == <w, weight_backward(g)>.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from burn_tensor import Float, Tensor

from .._ctx import sample
from ..reference import conv as ref
from .module_conv import (
    CONV2D,
    CONV_T2D,
    assert_close_scaled,
    assert_unchanged,
    conv_inputs,
)


def _setup(burn, c, transposed: bool):
    """Inputs of case `c` (bias always built), an output gradient, and the float64 forward."""
    (x_t, w_t, b_t), (x, w, b) = conv_inputs(burn, c.shapes, c.c_out, True, c.layout)
    if transposed:
        y = ref.conv_transpose2d(
            x, w, None, c.stride, c.padding, c.padding_out, c.dilation, c.groups
        )
    else:
        y = ref.conv2d(x, w, None, c.stride, c.padding, c.dilation, c.groups)
    g_t, g = burn.view_input(sample(y.shape, "unit", 7), Float, c.layout)
    return SimpleNamespace(
        x_t=x_t, w_t=w_t, b_t=b_t, g_t=g_t, x=x, w=w, b=b, g=g, y=y,
        xp=x_t.into_primitive(), wp=w_t.into_primitive(), bp=b_t.into_primitive(),
        gp=g_t.into_primitive(),
    )  # fmt: skip


def _result(burn, p) -> Tensor:
    return Tensor.from_primitive(p, Float, burn.device)


def _assert_adjoint(burn, s, a, grad: Tensor, what: str) -> None:
    """<a, grad> equals <y, g> (y the float64 forward output), up to float accumulation."""
    da = np.asarray(grad.to_data().array, np.float64)
    got = float(np.sum(a * da))
    expected = float(np.sum(s.y * s.g))
    bound = 10 * burn.loose.relative * max(1.0, float(np.sum(np.abs(s.y * s.g))))
    assert abs(got - expected) <= bound, (
        f"{what} is not the adjoint of the forward op: <input, grad> = {got}, "
        f"<forward, output_grad> = {expected}"
    )


def _assert_inputs_unchanged(burn, s):
    assert_unchanged(burn, (s.x_t, s.w_t, s.b_t, s.g_t), (s.x, s.w, s.b, s.g))


@pytest.mark.parametrize("name", list(CONV2D))
def test_conv2d_x_backward(burn, name):
    c = CONV2D[name]
    s = _setup(burn, c, False)
    dx = _result(burn, burn.backend.conv2d_x_backward(s.xp, s.wp, s.gp, c.options))
    expected = ref.conv2d_x_grad(s.x.shape, s.w, s.g, c.stride, c.padding, c.dilation, c.groups)
    assert_close_scaled(burn, dx, expected)
    _assert_adjoint(burn, s, s.x, dx, "conv2d_x_backward")
    _assert_inputs_unchanged(burn, s)


@pytest.mark.parametrize("name", list(CONV2D))
def test_conv2d_weight_backward(burn, name):
    c = CONV2D[name]
    s = _setup(burn, c, False)
    dw = _result(burn, burn.backend.conv2d_weight_backward(s.xp, s.wp, s.gp, c.options))
    expected = ref.conv2d_w_grad(s.x, s.w.shape, s.g, c.stride, c.padding, c.dilation, c.groups)
    assert_close_scaled(burn, dw, expected)
    _assert_adjoint(burn, s, s.w, dw, "conv2d_weight_backward")
    _assert_inputs_unchanged(burn, s)


@pytest.mark.parametrize("name", list(CONV2D))
def test_conv2d_bias_backward(burn, name):
    s = _setup(burn, CONV2D[name], False)
    db = _result(burn, burn.backend.conv2d_bias_backward(s.xp, s.wp, s.bp, s.gp))
    assert_close_scaled(burn, db, ref.bias_grad(s.g))
    _assert_inputs_unchanged(burn, s)


@pytest.mark.parametrize("name", list(CONV_T2D))
def test_conv_transpose2d_x_backward(burn, name):
    c = CONV_T2D[name]
    s = _setup(burn, c, True)
    dx = _result(burn, burn.backend.conv_transpose2d_x_backward(s.wp, s.gp, c.options))
    expected = ref.conv_transpose2d_x_grad(
        s.x.shape, s.w, s.g, c.stride, c.padding, c.dilation, c.groups
    )
    assert_close_scaled(burn, dx, expected)
    _assert_adjoint(burn, s, s.x, dx, "conv_transpose2d_x_backward")
    _assert_inputs_unchanged(burn, s)


@pytest.mark.parametrize("name", list(CONV_T2D))
def test_conv_transpose2d_weight_backward(burn, name):
    c = CONV_T2D[name]
    s = _setup(burn, c, True)
    dw = _result(burn, burn.backend.conv_transpose2d_weight_backward(s.xp, s.wp, s.gp, c.options))
    expected = ref.conv_transpose2d_w_grad(
        s.x, s.w.shape, s.g, c.stride, c.padding, c.dilation, c.groups
    )
    assert_close_scaled(burn, dw, expected)
    _assert_adjoint(burn, s, s.w, dw, "conv_transpose2d_weight_backward")
    _assert_inputs_unchanged(burn, s)


@pytest.mark.parametrize("name", list(CONV_T2D))
def test_conv_transpose2d_bias_backward(burn, name):
    s = _setup(burn, CONV_T2D[name], True)
    db = _result(burn, burn.backend.conv_transpose2d_bias_backward(s.xp, s.wp, s.bp, s.gp))
    assert_close_scaled(burn, db, ref.bias_grad(s.g))
    _assert_inputs_unchanged(burn, s)
