"""The Autodiff backend itself: identity, devices, tracking API, Gradients, pass-through kinds."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from burn_autodiff import (
    NONDIFF,
    Autodiff,
    AutodiffTensor,
    BalancedCheckpointing,
    Gradients,
    NoCheckpointing,
    classify,
)
from burn_ndarray import NdArray
from burn_tensor import Backend, Bool, DType, Float, Int, Tensor, TensorCheckError, op_table


def test_interned_and_composable():
    assert Autodiff(NdArray()) is Autodiff(NdArray())
    assert Autodiff(NdArray()) is Autodiff(NdArray(), checkpointing=NoCheckpointing())
    assert Autodiff(NdArray()) is not Autodiff(NdArray(), checkpointing=BalancedCheckpointing())
    assert Autodiff(NdArray()) is not Autodiff(NdArray(float_dtype="float64"))
    B = Autodiff(NdArray(float_dtype="float64", int_dtype="int64"))
    assert B.inner is NdArray(float_dtype="float64", int_dtype="int64")
    assert B.is_autodiff and not B.inner.is_autodiff
    assert (B.float_dtype, B.int_dtype) == (DType.F64, DType.I64)
    assert B.name == "autodiff<ndarray>" and B.device_kind == "Cpu"
    assert repr(B) == "Autodiff(NdArray(float_dtype='float64', int_dtype='int64'))"
    assert pickle.loads(pickle.dumps(B)) is B
    with pytest.raises(ValueError):
        Autodiff(B)
    with pytest.raises(TypeError):
        Autodiff("ndarray")


def test_devices():
    B = Autodiff(NdArray())
    assert B.device(0).inner() is NdArray().device(0)
    assert B.device().backend is B
    B.device().seed(3)
    a = Tensor.random([3], device=B.device())
    B.device().seed(3)
    b = Tensor.random([3], device=B.device())
    assert a.tolist() == b.tolist()


def test_book_autodiff_example():
    # let gradients = tensor.clone().backward(); tensor.grad(&gradients); tensor.grad_remove(...)
    device = Autodiff(NdArray()).device()
    tensor = Tensor.from_data([[2.0, 3.0], [4.0, 5.0]], device).require_grad()
    loss = (tensor * tensor).sum()
    gradients = loss.backward()
    grad = tensor.grad(gradients)
    assert grad.device is NdArray().device() and grad.tolist() == [[4.0, 6.0], [8.0, 10.0]]
    popped = tensor.grad_remove(gradients)
    assert popped.tolist() == [[4.0, 6.0], [8.0, 10.0]]
    assert tensor.grad(gradients) is None and gradients.is_empty()
    # inner(): validation without tracking
    inner = tensor.inner()
    assert inner.device is NdArray().device() and (inner + 5).tolist() == [[7.0, 8.0], [9.0, 10.0]]
    back = Tensor.from_inner(inner)
    assert back.device is device and not back.is_require_grad()


def test_require_grad_detach_and_leaves():
    device = Autodiff(NdArray()).device()
    x = Tensor.from_data([1.0, 2.0], device)
    assert not x.is_require_grad()
    x = x.require_grad()
    assert x.is_require_grad() and x.require_grad()._p is x._p
    y = x * 2.0
    assert y.is_require_grad()  # descends from a tracked leaf
    with pytest.raises(ValueError, match="non-leaf"):
        y.require_grad()
    d = y.detach()
    assert not d.is_require_grad() and d.tolist() == [2.0, 4.0]
    assert (d * x).sum().backward().__len__() == 1
    assert not x.set_require_grad(False).is_require_grad()
    # untracked tensors record nothing
    z = Tensor.ones([2], device) * 3.0
    assert z._p.node is None
    assert len(z.sum().backward()) == 0


def test_backward_sums_non_scalar_and_accumulates():
    device = Autodiff(NdArray()).device()
    x = Tensor.from_data([[1.0, 2.0, 3.0]], device).require_grad()
    grads = (x * x + x).backward()  # implicit sum over a non-scalar
    assert x.grad(grads).tolist() == [[3.0, 5.0, 7.0]]


def test_intermediate_grads_not_kept_and_grad_replace():
    device = Autodiff(NdArray()).device()
    x = Tensor.from_data([1.0, 2.0], device).require_grad()
    h = x * 3.0
    grads = h.sum().backward()
    assert isinstance(grads, Gradients) and len(grads) == 1
    assert h.grad(grads) is None
    x.grad_replace(grads, Tensor.from_data([9.0, 9.0], NdArray().device()))
    assert x.grad(grads).tolist() == [9.0, 9.0]
    with pytest.raises(TensorCheckError):
        Tensor.ones([2], NdArray().device()).grad(grads)
    for bad in (
        Tensor.ones([3], NdArray().device()),
        Tensor.ones([2], NdArray().device(), kind=Int),
    ):
        with pytest.raises(TensorCheckError, match=r"(?s)grad_replace.*of shape \[2\]"):
            x.grad_replace(grads, bad)
    assert x.grad(grads).tolist() == [9.0, 9.0]


def test_int_and_bool_are_inner_primitives():
    B = Autodiff(NdArray())
    device = B.device()
    i = Tensor.from_data([3, 1, 2], device)
    assert type(i._p) is np.ndarray and i.kind is Int
    assert (i + 1).tolist() == [4, 2, 3]
    x = Tensor.from_data([0.5, 2.0, 1.0], device).require_grad()
    m = x > 0.9
    assert m.kind is Bool and type(m._p) is np.ndarray
    assert type(x._p) is AutodiffTensor
    assert x.argmax(0).tolist() == [1]
    idx, vals = x.sort_with_indices(0)[1], x.sort(0)
    assert idx.kind is Int and vals.tolist() == [0.5, 1.0, 2.0]
    f = i.float()
    assert f.kind is Float and type(f._p) is AutodiffTensor and f._p.node is None


def test_max_dim_with_indices_tuple():
    device = Autodiff(NdArray()).device()
    x = Tensor.from_data([[1.0, 5.0, 2.0]], device).require_grad()
    v, i = x.max_dim_with_indices(1)
    assert i.tolist() == [[1]] and type(i._p) is np.ndarray
    assert x.grad(v.sum().backward()).tolist() == [[0.0, 1.0, 0.0]]


def test_op_table_classification_is_complete():
    required = set(Backend.required_ops())
    for name in op_table():
        how = classify(name)
        if how == "pass" and name.startswith("float_"):
            assert name in NONDIFF, f"{name} has no gradient rule"
        assert how in ("rule", "pass", "default", "special")
    # every required float op returning floats is differentiable through a rule
    assert {n for n in required if n.startswith("float_") and classify(n) == "pass"} <= NONDIFF
    assert Autodiff.missing_ops() == []


def test_composes_with_any_backend_subclass():
    class Slow(NdArray):
        name = "slow"

        def float_exp(self, x):  # an override the decorator must use, unchanged
            return np.exp(x) + 0.0

    B = Autodiff(Slow())
    x = Tensor.from_data([0.0, 1.0], B.device()).require_grad()
    g = x.grad(x.exp().sum().backward())
    np.testing.assert_allclose(g.numpy(), np.exp([0.0, 1.0]), rtol=1e-6)
