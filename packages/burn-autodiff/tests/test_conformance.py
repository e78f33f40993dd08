"""Autodiff conformance, run over every installed inner backend.

Forward results on Autodiff(B) must equal B's; gradients must match Burn's literal expectations
(values from burn-autodiff's own tests) within the backend's float precision. Every gradient read
here goes through `grad_of`, which also checks it has its input's shape and dtype and lives on the
inner device.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_autodiff import Autodiff, BalancedCheckpointing
from burn_tensor import (
    DType,
    NoDeviceError,
    Tensor,
    activation,
    available_backends,
    get_backend,
)
from burn_tensor import module as nnf

TOL = {"rtol": 1e-5, "atol": 1e-5}


def grad_of(x, grads):
    """`grad_of(x, grads)`, checked: x's shape and dtype, on x's inner device."""
    g = x.grad(grads)
    assert g is not None, "no gradient"
    assert (g.dims(), g.dtype) == (x.dims(), x.dtype), (
        f"gradient {g.dims()} {g.dtype} for an input {x.dims()} {x.dtype}"
    )
    assert g.device is x.device.inner()
    return g


def _usable(name):
    try:
        return get_backend(name)
    except NoDeviceError:
        return None


@pytest.fixture(params=available_backends())
def device(request):
    inner = _usable(request.param)
    if inner is None:
        pytest.skip(f"backend {request.param} has no usable device here")
    return Autodiff(inner).device()


@pytest.fixture(params=available_backends())
def balanced_device(request):
    inner = _usable(request.param)
    if inner is None:
        pytest.skip(f"backend {request.param} has no usable device here")
    return Autodiff(inner, checkpointing=BalancedCheckpointing()).device()


def test_forward_equals_inner(device):
    inner = device.inner()
    data = [[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]]
    for dev_ in (device, inner):
        assert Tensor.from_data(data, dev_).device is dev_
    ops = [
        lambda t: t.exp().log1p(),
        lambda t: t.matmul(t.transpose()),
        lambda t: t.sum_dim(1),
        lambda t: t.cumsum(1),
        lambda t: activation.softmax(t, 1),
        lambda t: t.clamp(-1.0, 1.0),
        lambda t: t.powf_scalar(2.0),
        lambda t: t.max_dim(0),
        lambda t: t.sort(1),
        lambda t: t.repeat_dim(0, 2).flip([1]),
        lambda t: t.mean(),
        lambda t: t.abs().sqrt(),
    ]
    for op in ops:
        a = op(Tensor.from_data(data, device).require_grad())
        b = op(Tensor.from_data(data, inner))
        np.testing.assert_allclose(a.numpy(), b.numpy(), **TOL)


def test_matmul_grads_burn_literal(device):
    # burn-autodiff/src/tests/matmul.rs: should_diff_matmul
    x = Tensor.from_data([[1.0, 7.0], [2.0, 3.0]], device).require_grad()
    y = Tensor.from_data([[4.0, 7.0], [2.0, 3.0]], device).require_grad()
    grads = x.matmul(y).backward()
    assert grad_of(x, grads).tolist() == [[11.0, 5.0], [11.0, 5.0]]
    assert grad_of(y, grads).tolist() == [[3.0, 3.0], [10.0, 10.0]]


def test_complex_graph(device, balanced_device):
    # burn-autodiff/src/tests/complex.rs style: matmul -> exp -> matmul -> sum_dim, both strategies
    x0 = np.array([[1.0, 0.7], [0.3, -0.3]])
    y0 = np.array([[0.4, 0.7], [0.2, 0.3]])
    # d/dx sum(exp(x@y) @ y) = (exp(x@y) * (1 @ y^T)) @ y^T
    expected = (np.exp(x0 @ y0) * (np.ones((2, 2)) @ y0.T)) @ y0.T
    for dev in (device, balanced_device):
        x = Tensor.from_data(x0, dev).require_grad()
        y = Tensor.from_data(y0, dev).require_grad()
        grads = x.matmul(y).exp().matmul(y).sum_dim(1).backward()
        np.testing.assert_allclose(grad_of(x, grads).numpy(), expected, **TOL)


def test_broadcast_and_mlp_grads(device):
    x = Tensor.from_data([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device).require_grad()
    b = Tensor.from_data([[0.5, -0.5, 1.0]], device).require_grad()
    loss = activation.relu(x - b).mean()
    grads = loss.backward()
    assert grad_of(b, grads).dims() == [1, 3]
    np.testing.assert_allclose(grad_of(b, grads).numpy(), [[-1 / 3, -1 / 3, -1 / 3]], **TOL)
    np.testing.assert_allclose(grad_of(x, grads).numpy(), np.full((2, 3), 1 / 6), **TOL)


def test_int_bool_and_detach(device):
    x = Tensor.from_data([[3.0, 1.0], [2.0, 5.0]], device).require_grad()
    idx = x.argmax(1)
    picked = x.gather(1, idx)
    mask = x.greater_elem(2.5)
    out = (picked.sum() + x.mask_fill(mask, 0.0).sum()) * x.detach().sum()
    grads = out.backward()
    np.testing.assert_allclose(grad_of(x, grads).numpy(), [[11.0, 11.0], [11.0, 11.0]], **TOL)


# Ops whose rules build tensors of their own (zeros, ones, masks, casts, index scatters): a rule
# that used the backend's default float dtype instead of the input's would show here.
DTYPE_OPS = {
    "exp_log1p": lambda t, w: t.exp().log1p(),
    "softmax": lambda t, w: activation.softmax(t, 3),
    "matmul": lambda t, w: t.matmul(t.swap_dims(2, 3)),
    "cumsum": lambda t, w: t.cumsum(2),
    "sort": lambda t, w: t.sort(3),
    "max_dim": lambda t, w: t.max_dim(1),
    "mean": lambda t, w: t.mean(),
    "gather": lambda t, w: t.gather(3, t.argmax(3)),
    "mask_fill": lambda t, w: t.mask_fill(t.greater_elem(0.5), 0.0),
    "cat": lambda t, w: Tensor.cat([t, t * 2.0], 1),
    "slice_assign": lambda t, w: t.slice_assign([slice(0, 1)], t[1:2] * 3.0),
    "cast_roundtrip": lambda t, w: t.cast(DType.F32 if t.dtype != DType.F32 else DType.F64),
    "conv2d": lambda t, w: nnf.conv2d(t, w, padding=[1, 0]),
    "max_pool2d": lambda t, w: nnf.max_pool2d(t, [2, 2], stride=[1, 1], padding=[1, 0]),
    "avg_pool2d": lambda t, w: nnf.avg_pool2d(t, [2, 2], padding=[0, 1]),
}


@pytest.mark.parametrize("dtype", [DType.F32, DType.F64, DType.F16], ids=lambda d: d.name)
@pytest.mark.parametrize("op", list(DTYPE_OPS), ids=list(DTYPE_OPS))
def test_grads_keep_input_dtype(device, dtype, op):
    data = np.arange(1, 2 * 3 * 4 * 5 + 1).reshape(2, 3, 4, 5) / 60.0
    try:
        x = Tensor.from_data(data, device).cast(dtype).require_grad()
    except TypeError as exc:
        # A backend without this dtype (OpenCL has no float16 yet) must refuse it clearly.
        assert "cannot hold" in str(exc) and dtype.value in str(exc), exc
        return
    w = Tensor.from_data(np.full((2, 3, 3, 2), 1 / 9), device).cast(dtype).require_grad()
    grads = DTYPE_OPS[op](x, w).sum().backward()
    grad_of(x, grads)
    if op == "conv2d":
        grad_of(w, grads)
