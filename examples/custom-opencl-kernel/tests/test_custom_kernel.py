"""The fused OpenCL kernel on PoCL (CI) or an OpenCL GPU (BURN_OPENCL_TEST_DEVICE_TYPE=gpu):
forward against numpy float64, gradients against numpy's analytic ones and central finite
differences, broadcasting, checkpointing, and the per-backend forward choice."""

from __future__ import annotations

import os

import numpy as np
import pytest
from burn_autodiff import Autodiff, BalancedCheckpointing
from burn_ndarray import NdArray
from burn_opencl import OpenCl, SourceTemplate, build_info
from burn_tensor import Tensor
from custom_opencl_kernel import (
    FusedMatmulAddRelu,
    fused_matmul_add_relu,
    matmul_add_relu_custom,
    matmul_add_relu_reference,
)
from custom_opencl_kernel.forward import fused_matmul_add_relu_primitive

DEVICE_TYPE = os.environ.get("BURN_OPENCL_TEST_DEVICE_TYPE", "cpu")

#: (lhs, rhs, bias) shapes: sizes that are not multiples of the 16x16 work-group, broadcast
#: batches on either side, a rank-2 case and a rank-4 one
SHAPES = [
    ([2, 17, 5], [2, 5, 19], [2, 17, 19]),
    ([3, 4, 7], [1, 7, 33], [1, 1, 33]),  # rhs and bias broadcast over the batch
    ([1, 20, 3], [4, 3, 2], [4, 20, 2]),  # lhs broadcast
    ([9, 31], [31, 16], [1, 16]),
    ([2, 3, 6, 5], [1, 3, 5, 4], [2, 1, 6, 4]),
]


def _np_forward(lhs, rhs, bias):
    return np.maximum(np.matmul(lhs, rhs) + bias, 0.0)


def _sum_to(g, shape):
    for d, n in enumerate(shape):
        if n == 1 and g.shape[d] != 1:
            g = g.sum(axis=d, keepdims=True)
    return g


def _np_grads(lhs, rhs, bias, gout):
    """Analytic gradients of sum(gout * relu(lhs @ rhs + bias)) in float64."""
    mask = (np.matmul(lhs, rhs) + bias) > 0
    g = gout * mask
    return (
        _sum_to(np.matmul(g, np.swapaxes(rhs, -1, -2)), lhs.shape),
        _sum_to(np.matmul(np.swapaxes(lhs, -1, -2), g), rhs.shape),
        _sum_to(g, bias.shape),
    )


def _arrays(shapes, seed):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=s) for s in shapes]


def _backend(float_dtype):
    b = OpenCl(DEVICE_TYPE, float_dtype=float_dtype)
    if float_dtype == "float64" and not b._rt(None).fp64:
        pytest.skip("this OpenCL device has no float64")
    return b


@pytest.mark.parametrize("float_dtype,tol", [("float32", 1e-5), ("float64", 1e-12)])
@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: "-".join("x".join(map(str, d)) for d in s))
def test_forward_matches_numpy_float64(shapes, float_dtype, tol):
    device = _backend(float_dtype).device()
    arrs = _arrays(shapes, 1)
    cast = [a.astype(float_dtype) for a in arrs]
    got = fused_matmul_add_relu(*(Tensor.from_data(a, device) for a in cast)).numpy()
    want = _np_forward(*(a.astype(np.float64) for a in cast))
    assert got.dtype == np.dtype(float_dtype) and got.shape == want.shape
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)
    assert (got >= 0).all() and (got == 0).any()  # ReLU clipped something


def test_strided_and_offset_inputs_are_made_contiguous():
    device = _backend("float32").device()
    lhs, rhs, bias = _arrays(([2, 6, 17], [2, 6, 9], [1, 1, 9]), 2)
    big = np.concatenate([np.zeros(3), lhs.reshape(-1)])
    lt = Tensor.from_data(big.astype(np.float32), device)[3:].reshape([2, 6, 17]).swap_dims(1, 2)
    got = fused_matmul_add_relu(
        lt, Tensor.from_data(rhs.astype(np.float32), device), Tensor.from_data(bias, device)
    ).numpy()
    want = _np_forward(np.swapaxes(lhs, 1, 2), rhs, bias)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("checkpointing", [None, BalancedCheckpointing()], ids=["none", "balanced"])
@pytest.mark.parametrize("shapes", SHAPES[:3], ids=["plain", "rhs-bias-broadcast", "lhs-broadcast"])
def test_gradients_match_numpy(shapes, checkpointing):
    device = Autodiff(_backend("float64"), checkpointing=checkpointing).device()
    arrs = _arrays(shapes, 3)
    gout = np.random.default_rng(4).normal(
        size=np.broadcast_shapes(
            np.matmul(np.zeros(shapes[0]), np.zeros(shapes[1])).shape, tuple(shapes[2])
        )
    )
    ts = [Tensor.from_data(a, device).require_grad() for a in arrs]
    out = matmul_add_relu_custom(*ts)
    assert out.is_require_grad()
    grads = (out * Tensor.from_data(gout, device)).sum().backward()
    for t, want in zip(ts, _np_grads(*arrs, gout)):
        got = t.grad(grads).numpy()
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_gradients_match_finite_differences():
    backend = _backend("float64")
    device = Autodiff(backend).device()
    shapes = ([2, 3, 4], [1, 4, 5], [1, 3, 1])
    arrs = _arrays(shapes, 5)
    arrs[2] += 0.3  # keep pre-activations away from the ReLU kink at 0 (|x| > h below)
    plain = backend.device()

    def loss(vals):
        out = fused_matmul_add_relu(*(Tensor.from_data(v, plain) for v in vals))
        return float((out * out).sum().into_scalar())

    ts = [Tensor.from_data(a, device).require_grad() for a in arrs]
    out = matmul_add_relu_custom(*ts)
    grads = (out * out).sum().backward()
    h = 1e-6
    for i, t in enumerate(ts):
        fd = np.zeros_like(arrs[i])
        for idx in np.ndindex(arrs[i].shape):
            up = [a.copy() for a in arrs]
            dn = [a.copy() for a in arrs]
            up[i][idx] += h
            dn[i][idx] -= h
            fd[idx] = (loss(up) - loss(dn)) / (2 * h)
        np.testing.assert_allclose(t.grad(grads).numpy(), fd, rtol=1e-6, atol=1e-7)


def test_untracked_inputs_record_nothing_and_match_reference():
    device = Autodiff(_backend("float32")).device()
    arrs = [a.astype(np.float32) for a in _arrays(SHAPES[1], 6)]
    ts = [Tensor.from_data(a, device) for a in arrs]
    out = matmul_add_relu_custom(*ts)
    assert not out.is_require_grad()
    ref = matmul_add_relu_reference(*ts)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-5, atol=1e-5)


def test_forward_is_chosen_per_backend():
    assert matmul_add_relu_custom.forward_for(OpenCl("cpu")) is fused_matmul_add_relu
    assert matmul_add_relu_custom.forward_for(NdArray()) is matmul_add_relu_reference
    # on NdArray the reference runs, with the same result
    arrs = _arrays(SHAPES[0], 7)
    got = matmul_add_relu_custom(*(Tensor.from_data(a, NdArray("float64").device()) for a in arrs))
    np.testing.assert_allclose(got.numpy(), _np_forward(*arrs), rtol=1e-12)


def test_kernel_template_and_info_layout():
    k = FusedMatmulAddRelu(16, 16, "double")
    src = k.source_template().complete()
    assert "{{" not in src and "reqd_work_group_size(16, 16, 1)" in src and "double" in src
    with pytest.raises(ValueError, match="workgroup_size_x"):
        SourceTemplate("{{ workgroup_size_x }}").complete()
    # build_info: rank, every array's strides, then every array's shape (the book's layout)
    device = _backend("float32").device()
    prims = [Tensor.zeros(s, device).into_primitive() for s in ([2, 3, 4], [2, 4, 5], [2, 3, 5])]
    info = build_info(prims).tolist()
    assert info == [3, 12, 4, 1, 20, 5, 1, 15, 5, 1, 2, 3, 4, 2, 4, 5, 2, 3, 5]


def test_mismatched_inputs_raise_a_clear_error():
    device = _backend("float32").device()
    a = Tensor.zeros([2, 3, 4], device).into_primitive()
    b = Tensor.zeros([2, 5, 6], device).into_primitive()
    with pytest.raises(ValueError, match="inner dims differ"):
        fused_matmul_add_relu_primitive(a, b, b)
    with pytest.raises(ValueError, match="one rank"):
        fused_matmul_add_relu_primitive(a, Tensor.zeros([4, 6], device).into_primitive(), b)
