"""Conformance: creation, conversion, the dtype matrix, random sampling and data round trips."""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import Bool, Distribution, DType, Float, Int, Tensor, TensorCheckError, TensorData


@pytest.mark.parametrize("shape", [(2, 3), (0,), (1, 0, 2), (4,)])
def test_zeros_ones_full_empty(burn, shape):
    dev = burn.device
    burn.assert_close(Tensor.zeros(shape, dev), np.zeros(shape))
    burn.assert_close(Tensor.ones(shape, dev), np.ones(shape))
    burn.assert_equal(Tensor.zeros(shape, dev, kind=Int), np.zeros(shape, np.int64))
    burn.assert_equal(Tensor.ones(shape, dev, kind=Int), np.ones(shape, np.int64))
    burn.assert_equal(Tensor.ones(shape, dev, kind=Bool), np.ones(shape, bool))
    burn.assert_equal(Tensor.zeros(shape, dev, kind=Bool), np.zeros(shape, bool))
    burn.assert_close(Tensor.full(shape, 2.5, dev), np.full(shape, 2.5))
    burn.assert_equal(Tensor.full(shape, -3, dev), np.full(shape, -3))
    burn.assert_equal(Tensor.full(shape, True, dev), np.full(shape, True))
    burn.assert_close(Tensor.full(shape, 4, dev, kind=Float), np.full(shape, 4.0))
    e = Tensor.empty(shape, dev)
    assert e.dims() == list(shape) and e.kind is Float and e.dtype is burn.fdt
    e = Tensor.empty(shape, dev, kind=Int)
    assert e.dims() == list(shape) and e.dtype is burn.idt
    e = Tensor.empty(shape, dev, kind=Bool)
    assert e.dims() == list(shape) and e.kind is Bool and e.dtype is DType.BOOL


def test_int_full_refuses_a_fractional_fill(burn):
    # np.full(..., 2.5, int64) truncates to 2; `2.5 / int_tensor` went through it.
    dev = burn.device
    burn.assert_equal(Tensor.full([2], 3.0, dev, kind=Int), np.full(2, 3))
    for make in (
        lambda: Tensor.full([2], 2.5, dev, kind=Int),
        lambda: burn.int([1, 2]).full_like(2.5),
        lambda: 2.5 / burn.int([1, 2]),
    ):
        with pytest.raises(TensorCheckError, match="non-integral"):
            make()


def test_from_data_refuses_ints_out_of_the_dtype_range(burn):
    dev = burn.device
    assert Tensor.from_data([127, -128], dev, dtype="int8").tolist() == [127, -128]
    with pytest.raises(ValueError, match="do not fit"):
        Tensor.from_data([300], dev, dtype="int8")  # numpy would wrap it to 44


def test_like_constructors(burn):
    for kind in (Float, Int):
        t = burn.tensor(np.arange(6).reshape(2, 3), kind, "permuted")
        burn.assert_result(t.zeros_like(), np.zeros((2, 3)), kind)
        burn.assert_result(t.ones_like(), np.ones((2, 3)), kind)
        burn.assert_result(t.full_like(7), np.full((2, 3), 7), kind)
        assert t.empty_like().dims() == [2, 3] and t.empty_like().dtype is t.dtype
    r = burn.float(np.zeros((50, 4))).random_like(Distribution.uniform(-1, 1))
    assert r.dims() == [50, 4] and r.dtype is burn.fdt
    r.to_data().assert_within_range(-1, 1)


def test_arange(burn):
    dev = burn.device
    burn.assert_equal(Tensor.arange(5, 10, dev), np.arange(5, 10))
    burn.assert_equal(Tensor.arange(range(5, 10), dev), np.arange(5, 10))
    burn.assert_equal(Tensor.arange(4, device=dev), np.arange(4))
    burn.assert_equal(Tensor.arange_step(5, 10, 2, dev), np.array([5, 7, 9]))
    burn.assert_equal(Tensor.arange_step(10, 0, -3, dev), np.array([10, 7, 4, 1]))
    burn.assert_equal(Tensor.arange(3, 3, dev), np.zeros(0, np.int64))


def test_eye(burn):
    burn.assert_close(Tensor.eye(3, burn.device), np.eye(3))
    burn.assert_equal(Tensor.eye(2, burn.device, kind=Int), np.eye(2, dtype=np.int64))


def test_from_data_inputs(burn):
    dev = burn.device
    burn.assert_close(Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], dev), [[1, 2], [3, 4]])
    burn.assert_equal(Tensor.from_data([[1, 2], [3, 4]], dev), np.array([[1, 2], [3, 4]]))
    burn.assert_equal(Tensor.from_data([True, False], dev), np.array([True, False]))
    burn.assert_close(Tensor.from_data(np.arange(4.0), dev), np.arange(4.0))
    burn.assert_close(Tensor.from_data(TensorData([1.5, 2.5]), dev), [1.5, 2.5])
    burn.assert_close(Tensor.from_floats([1, 2], dev), [1.0, 2.0])
    burn.assert_equal(Tensor.from_ints([1, 2], dev), np.array([1, 2]))
    burn.assert_equal(Tensor.from_bool([1, 0], dev), np.array([True, False]))
    burn.assert_close(Tensor.from_data([1, 2], dev, dtype=burn.fdt), [1.0, 2.0])
    burn.assert_equal(Tensor.from_data([1.7, -1.7], dev, dtype=burn.idt), np.array([1, -1]))
    # non-contiguous numpy input and later writes to it
    src = np.arange(12.0).reshape(3, 4).T
    t = Tensor.from_data(src, dev)
    src[0, 0] = 100.0
    burn.assert_close(t, np.arange(12.0).reshape(3, 4).T)
    # scalars
    burn.assert_close(Tensor.from_data(3.0, dev), np.array([3.0]))  # no rank-0 tensors, as Burn


def test_conversions(burn):
    f = burn.float([[-1.7, -0.5, 0.0], [0.5, 1.7, 2.0]], "permuted")
    burn.assert_equal(f.int(), np.array([[-1, 0, 0], [0, 1, 2]]))
    burn.assert_equal(f.bool(), np.array([[True, True, False], [True, True, True]]))
    i = burn.int([[-2, 0, 3]], "flipped")
    burn.assert_close(i.float(), [[-2.0, 0.0, 3.0]])
    burn.assert_equal(i.bool(), np.array([[True, False, True]]))
    b = burn.bool([True, False])
    burn.assert_close(b.float(), [1.0, 0.0])
    burn.assert_equal(b.int(), np.array([1, 0]))
    # identity conversions
    assert f.float() is f and i.int() is i and b.bool() is b


@pytest.mark.parametrize("target", [DType.F32, DType.F64])
def test_float_cast(burn, target):
    f = burn.float([1.25, -2.5])
    c = f.cast(target)
    assert c.dtype is target and c.kind is Float
    assert c.tolist() == [1.25, -2.5]
    # float ops on the cast tensor keep its dtype
    assert (c + c).dtype is target
    assert c.exp().dtype is target


@pytest.mark.parametrize("target", [DType.I32, DType.I64])
def test_int_cast(burn, target):
    i = burn.int([1, -2, 3])
    c = i.cast(target)
    assert c.dtype is target and c.kind is Int
    assert c.tolist() == [1, -2, 3]
    assert c.sum().dtype is target


def test_result_dtypes_follow_the_backend(burn):
    f, i, b = burn.float([[1.0, 2.0]]), burn.int([[1, 2]]), burn.bool([[True, False]])
    assert f.argmax(1).dtype is burn.idt
    assert f.sort_with_indices(1)[1].dtype is burn.idt
    assert i.sum().dtype is burn.idt
    assert i.float().dtype is burn.fdt
    assert b.int().dtype is burn.idt
    assert f.greater(f).dtype is DType.BOOL
    assert b.argwhere().dtype is burn.idt
    assert Tensor.arange(3, device=burn.device).dtype is burn.idt


def test_scalars_and_python_protocols(burn):
    t = burn.float([[2.5]])
    assert t.into_scalar() == 2.5 and t.item() == 2.5
    assert float(t) == 2.5 and int(t) == 2 and bool(t) is True
    assert isinstance(burn.int([7]).into_scalar(), int)
    assert burn.bool([True]).into_scalar() is True
    assert len(burn.float(np.zeros((4, 2)))) == 4
    assert burn.float([[1.0, 2.0]]).tolist() == [[1.0, 2.0]]
    np.testing.assert_array_equal(np.asarray(burn.int([1, 2])), [1, 2])
    assert burn.float([1.0]).numpy().dtype == burn.fdt.np


def test_data_round_trip_and_immutability(burn):
    x = np.arange(6.0).reshape(2, 3)
    t = burn.float(x)
    d = t.to_data()
    assert d.shape == (2, 3) and d.dtype is burn.fdt
    arr = t.numpy()
    arr[0, 0] = 99.0
    burn.assert_close(t, x)
    u = t.slice_assign([slice(0, 1)], burn.float(np.zeros((1, 3))))
    burn.assert_close(t, x)
    burn.assert_close(u, np.vstack([np.zeros(3), x[1]]))
    c = t.clone()
    burn.assert_close(c, x)
    assert t.to_device(burn.device) is t


def test_random_distributions(burn):
    dev = burn.device
    burn.backend.seed(7)
    u = Tensor.random((2000,), Distribution.uniform(-2, 3), dev)
    assert u.dtype is burn.fdt and u.dims() == [2000]
    a = u.numpy().astype(np.float64)
    assert a.min() >= -2 and a.max() < 3 and abs(a.mean() - 0.5) < 0.2
    d = Tensor.random((2000,), Distribution.default(), dev).numpy()
    assert d.min() >= 0 and d.max() < 1
    n = Tensor.random((4000,), Distribution.normal(1.0, 2.0), dev).numpy().astype(np.float64)
    assert abs(n.mean() - 1.0) < 0.2 and abs(n.std() - 2.0) < 0.2
    # float64 before the mean: numpy sums an ml_dtypes bfloat16 array in bfloat16, where the
    # running count stops at 256 (256 + 1 rounds back to 256 with 8 significant bits)
    bern = Tensor.random((2000,), Distribution.bernoulli(0.3), dev).numpy().astype(np.float64)
    assert set(np.unique(bern)) <= {0.0, 1.0} and abs(bern.mean() - 0.3) < 0.05
    ir = Tensor.int_random((1000,), Distribution.uniform(0, 10), dev)
    assert ir.dtype is burn.idt
    iv = ir.numpy()
    assert iv.min() >= 0 and iv.max() <= 9 and len(np.unique(iv)) == 10


def test_seed_reproducible(burn):
    dev = burn.device
    dev.seed(42)
    a = Tensor.random((16,), Distribution.normal(0, 1), dev).numpy()
    dev.seed(42)
    b = Tensor.random((16,), Distribution.normal(0, 1), dev).numpy()
    np.testing.assert_array_equal(a, b)
    c = Tensor.random((16,), Distribution.normal(0, 1), dev).numpy()
    assert not np.array_equal(a, c)
