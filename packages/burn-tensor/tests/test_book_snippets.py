"""Burn Book snippets of the tensor chapter, written as the books write them (issue 12, item 7)."""

import math

import pytest

from burn_tensor import DEFAULT_ATOL, DEFAULT_RTOL, Data, Tensor, TensorData


def test_default_tolerances_are_burns():
    # burn-tensor api/float.rs: "Default is 1e-5; see DEFAULT_RTOL", "Default is 1e-8".
    assert (DEFAULT_RTOL, DEFAULT_ATOL) == (1e-5, 1e-8)


def test_all_close_with_none_tolerances(device64):
    # Burn: `tensor1.all_close(tensor2, None, None)` with the api's own example data.
    t = Tensor.from_data([[1.0, -2.0, 3.0], [5.0, 9.0, 6.0]], device64)
    assert t.all_close(t, None, None) is True
    # None means rtol 1e-5, atol 1e-8: the bound is 1e-8 + 1e-5 * |other|.
    near = Tensor.from_data([[1.0, -2.0, 3.0], [5.0, 9.00009, 6.0]], device64)
    far = Tensor.from_data([[1.0, -2.0, 3.0], [5.0, 9.0002, 6.0]], device64)
    assert t.all_close(near, None, None) is True  # 9e-5 <= 1e-8 + 9.00009e-5
    assert t.all_close(far, None, None) is False  # 2e-4 > 1e-8 + 9.0002e-5
    assert t.all_close(far, 1e-4, None) is True  # 2e-4 <= 1e-8 + 9.0002e-4
    assert t.all_close(far, None, 2e-4) is True  # 2e-4 <= 2e-4 + 9.0002e-5


def test_is_close_with_none_tolerances(device64):
    # Burn: `let tensor = tensor1.is_close(tensor2, None, None);`
    a = Tensor.from_data([1.0, 2.0, 100.0, math.inf, math.inf, 1.0, math.nan], device64)
    b = Tensor.from_data(
        [1.0 + 1e-9, 2.1, 100.0005, math.inf, -math.inf, math.inf, math.nan], device64
    )
    # 1e-9 <= 1e-8 + 1e-5; 0.1 > 2.1e-5; 5e-4 <= 1.000005e-3; inf == inf; opposite infinities and
    # a finite value against inf are not close (both finite is required); NaN never.
    assert a.is_close(b, None, None).tolist() == [True, False, True, True, False, False, False]
    assert a.is_close(b, None, None).tolist() == a.is_close(b).tolist()


def test_first_book_reads_a_loss_through_value(device):
    # First book: `f64::from_elem(loss.tensor.clone().mean().into_data().value[0])`
    loss = Tensor.from_data([0.5, 1.5, 2.5], device)
    value = loss.clone().mean().into_data().value
    assert value == [1.5] and isinstance(value, list)
    assert float(value[0]) == 1.5
    assert TensorData([[1, 2], [3, 4]]).value == [1, 2, 3, 4]  # flat, row-major, as Vec<E>


def test_first_book_data_from_and_convert(device, device64):
    # First book: `Tensor::<Backend, 1>::from_data(Data::from([1.0, 2.0, 3.0]).convert())`
    t = Tensor.from_data(Data([1.0, 2.0, 3.0]).convert(), device64)
    assert t.tolist() == [1.0, 2.0, 3.0] and t.dtype.value == "float64"
    # `Tensor::<Backend, 1, Int>::from_data(Data::from(&arr[0..3]).convert())`
    arr = [1, 2, 3, 4, 5]
    i = Tensor.from_data(Data(arr[0:3]).convert(), device)
    assert i.tolist() == [1, 2, 3] and i.dtype.value == "int32"
    assert Data is TensorData
    d = Data([[1.0, 2.0]])
    assert list(d.shape) == [1, 2] and d.value == [1.0, 2.0]
    assert d.convert() is d
    assert Data([1.5]).convert("float64").value == [1.5]


def test_convert_without_dtype_keeps_the_data_unchanged():
    d = TensorData([1.0, 2.0])
    assert d.convert().dtype.value == "float32"
    with pytest.raises(ValueError, match="non-finite"):
        TensorData([math.nan]).convert("int32")
