"""Tensor methods reach the backend op of the same name, so a backend's faster override is used
(not a composition of other ops that bypasses it)."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_tensor import Bool, Int, Tensor, module

CALLS: list[str] = []
SPIED = [
    "float_sort",
    "int_sort",
    "float_argsort",
    "int_argsort",
    "float_square",
    "float_transpose",
    "int_transpose",
    "bool_transpose",
    "float_topk_with_indices",
    "float_unfold",
    "int_unfold",
    "max_pool1d",
    "bool_zeros",
    "bool_empty",
    "int_to_device",
    "bool_to_device",
    "float_to_device",
]


def _spy(name):
    def op(self, *args):
        CALLS.append(name)
        return getattr(super(Spy, self), name)(*args)

    op.__name__ = name
    return op


# A two-device CPU backend whose spied ops record their calls, then run NdArray's.
Spy = type(
    "Spy",
    (NdArray,),
    {"name": "spy", "device_count": lambda self: 2, **{n: _spy(n) for n in SPIED}},
)
DEV = Spy(float_dtype="float64", int_dtype="int64").device()
DEV1 = Spy(float_dtype="float64", int_dtype="int64").device(1)
X = np.array([[3.0, -1.0, 2.0, 0.5], [0.0, 4.0, -2.0, 1.0]])
XI = np.array([[3, -1, 2, 5], [0, 4, -2, 1]])


@pytest.fixture(autouse=True)
def _clear():
    CALLS.clear()


def _calls(fn):
    CALLS.clear()
    out = fn()
    return out, list(CALLS)


@pytest.mark.parametrize(("data", "kind"), [(X, "float"), (XI, "int")])
def test_sort_and_argsort_use_the_backend_ops(data, kind):
    t = Tensor.from_data(data, DEV)
    out, calls = _calls(lambda: t.sort(1, descending=True))
    assert calls == [f"{kind}_sort"]
    np.testing.assert_array_equal(out.numpy(), -np.sort(-data, axis=1))
    out, calls = _calls(lambda: t.argsort(0))
    assert calls == [f"{kind}_argsort"] and out.kind is Int
    np.testing.assert_array_equal(out.numpy(), np.argsort(data, axis=0, kind="stable"))


def test_square_uses_float_square():
    out, calls = _calls(lambda: Tensor.from_data(X, DEV).square())
    assert calls == ["float_square"]
    np.testing.assert_array_equal(out.numpy(), X * X)
    # Int has no int_square in the contract: it multiplies.
    assert Tensor.from_data(XI, DEV).square().tolist() == (XI * XI).tolist()


@pytest.mark.parametrize(("data", "kind"), [(X, "float"), (XI, "int"), (X > 0.7, "bool")])
def test_transpose_uses_the_backend_op(data, kind):
    out, calls = _calls(lambda: Tensor.from_data(data, DEV).transpose())
    assert calls == [f"{kind}_transpose"]
    np.testing.assert_array_equal(out.numpy(), data.T)


def test_topk_uses_float_topk_with_indices():
    (v, i), calls = _calls(lambda: Tensor.from_data(X, DEV).topk_with_indices(2, 1))
    assert calls == ["float_topk_with_indices"]
    assert v.tolist() == [[3.0, 2.0], [4.0, 1.0]] and i.tolist() == [[0, 2], [1, 3]]


@pytest.mark.parametrize(("data", "kind"), [(X, "float"), (XI, "int")])
def test_unfold_uses_the_backend_op(data, kind):
    out, calls = _calls(lambda: Tensor.from_data(data, DEV).unfold(1, 2, 1))
    assert calls == [f"{kind}_unfold"]
    ref = np.lib.stride_tricks.sliding_window_view(data, 2, axis=1)  # [2, 3, 2]
    np.testing.assert_array_equal(out.numpy(), ref)
    assert Tensor.from_data(data, DEV).unfold(1, 5, 1).dims() == [2, 0, 5]


def test_max_pool1d_uses_the_backend_op():
    x = np.array([[[1.0, 5.0, 2.0, 0.0, 3.0]]])
    out, calls = _calls(lambda: module.max_pool1d(Tensor.from_data(x, DEV), 2, 1))
    assert calls == ["max_pool1d"]
    assert out.tolist() == [[[5.0, 5.0, 2.0, 3.0]]]


def test_bool_creation_uses_bool_ops():
    z, calls = _calls(lambda: Tensor.zeros([2, 3], DEV, kind=Bool))
    assert calls == ["bool_zeros"] and z.tolist() == [[False] * 3] * 2
    e, calls = _calls(lambda: Tensor.empty([2, 3], DEV, kind=Bool))
    assert calls == ["bool_empty"] and e.dims() == [2, 3] and e.kind is Bool


@pytest.mark.parametrize(("data", "kind"), [(X, "float"), (XI, "int"), (X > 0.7, "bool")])
def test_to_device_uses_the_kinds_op(data, kind):
    t = Tensor.from_data(data, DEV)
    out, calls = _calls(lambda: t.to_device(DEV1))
    assert calls == [f"{kind}_to_device"]
    assert out.device is DEV1
    np.testing.assert_array_equal(out.numpy(), data)
