"""The base-class (default) decompositions of the module backward ops, run on a backend that uses them.

NdArray overrides these defaults with faster code, so without this test a future backend relying on the
defaults would be their first user. References: the adjoint identity <f(x), g> == <x, f*(g)> of the
linear maps, with the forward computed by NdArray's own conv_transpose2d, and NdArray's overrides.
"""

from __future__ import annotations

import numpy as np
import pytest

from burn_ndarray import NdArray
from burn_tensor import ConvOptions, ConvTransposeOptions, Tensor, TensorData
from burn_tensor._ops_module import ModuleOps


class DefaultsNdArray(NdArray):
    """NdArray whose module backward passes are the burn_tensor defaults."""

    name = "ndarray-defaults"
    conv2d_x_backward = ModuleOps.conv2d_x_backward
    conv2d_weight_backward = ModuleOps.conv2d_weight_backward
    conv_transpose2d_x_backward = ModuleOps.conv_transpose2d_x_backward
    conv_transpose2d_weight_backward = ModuleOps.conv_transpose2d_weight_backward
    unfold4d = ModuleOps.unfold4d


B = DefaultsNdArray(float_dtype="float64")
REF = NdArray(float_dtype="float64")
CASES = [
    # stride, padding, padding_out, dilation, groups
    ((1, 1), (0, 0), (0, 0), (1, 1), 1),
    ((2, 2), (1, 1), (1, 1), (1, 1), 1),
    ((1, 2), (1, 0), (0, 1), (2, 1), 2),
    ((1, 1), (0, 0), (1, 1), (2, 2), 1),  # padding_out >= stride: Burn's dilation_2 case
    ((2, 1), (1, 1), (1, 0), (3, 1), 1),
]


def _arr(shape, seed):
    return np.random.default_rng(seed).normal(size=shape)


@pytest.mark.parametrize("stride,padding,padding_out,dilation,groups", CASES)
def test_conv_transpose2d_default_backwards_are_adjoints(
    stride, padding, padding_out, dilation, groups
):
    opts = ConvTransposeOptions(stride, padding, padding_out, dilation, groups)
    x = _arr((2, 4, 3, 4), 0)
    w = _arr((4, 6 // groups, 3, 2), 1)
    out = REF.conv_transpose2d(x, w, None, opts)
    g = _arr(out.shape, 2)
    dx = B.conv_transpose2d_x_backward(w, g, opts)
    dw = B.conv_transpose2d_weight_backward(x, w, g, opts)
    assert dx.shape == x.shape and dw.shape == w.shape
    # <T(x), g> == <x, T*(g)> for the map in x, and likewise in w.
    np.testing.assert_allclose(np.vdot(out, g), np.vdot(x, dx), rtol=1e-10)
    out_w = REF.conv_transpose2d(x, w + 0.0, None, opts)
    np.testing.assert_allclose(np.vdot(out_w, g), np.vdot(w, dw), rtol=1e-10)
    np.testing.assert_allclose(
        dx, REF.conv_transpose2d_x_backward(w, g, opts), rtol=1e-9, atol=1e-12
    )
    np.testing.assert_allclose(
        dw, REF.conv_transpose2d_weight_backward(x, w, g, opts), rtol=1e-9, atol=1e-12
    )


@pytest.mark.parametrize("stride,dilation,groups", [((1, 1), (1, 1), 1), ((2, 1), (1, 2), 2)])
def test_conv2d_default_backwards_are_adjoints(stride, dilation, groups):
    opts = ConvOptions(stride, (1, 1), dilation, groups)
    x = _arr((2, 4, 7, 6), 3)
    w = _arr((6, 4 // groups, 3, 3), 4)
    out = REF.conv2d(x, w, None, opts)
    g = _arr(out.shape, 5)
    dx = B.conv2d_x_backward(x, w, g, opts)
    dw = B.conv2d_weight_backward(x, w, g, opts)
    np.testing.assert_allclose(np.vdot(out, g), np.vdot(x, dx), rtol=1e-10)
    np.testing.assert_allclose(np.vdot(out, g), np.vdot(w, dw), rtol=1e-10)


def test_defaults_backend_through_the_tensor_api():
    device = B.device()
    x = Tensor.from_data(TensorData(_arr((1, 2, 3, 3), 6)), device)
    assert (
        x.backend is B
        and type(B).conv_transpose2d_x_backward is ModuleOps.conv_transpose2d_x_backward
    )
