"""pad (reflect, edge), take, slice_dim, max_abs_dims, one_hot_fill: checks and literal values.

Every backend's numerics are in the conformance suite's `odds` module; here the typed errors
and Burn's documented examples.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_tensor import PadMode, Tensor, TensorCheckError

DEV = NdArray(float_dtype="float64").device()


def t(x):
    return Tensor.from_data(np.asarray(x, dtype=np.float64), DEV)


def test_pad_reflect_and_edge_were_missing():
    # Before issue 38, pad(.., "reflect") raised: the second argument was the constant only.
    x = t([[1.0, 2.0, 3.0, 4.0]])
    assert x.pad((2, 0), "reflect").tolist() == [[3.0, 2.0, 1.0, 2.0, 3.0, 4.0]]
    assert x.pad((2, 0), PadMode.Edge).tolist() == [[1.0, 1.0, 1.0, 2.0, 3.0, 4.0]]
    assert x.pad((1, 1), PadMode.Constant(9)).tolist() == [[9.0, 1.0, 2.0, 3.0, 4.0, 9.0]]
    assert x.pad((1, 0), 7).tolist() == [[7.0, 1.0, 2.0, 3.0, 4.0]]


def test_pad_checks():
    x = t(np.ones((2, 3)))
    with pytest.raises(TensorCheckError, match=r"reflect padding \(0, 3\) of dim 1"):
        x.pad((0, 3), "reflect")
    with pytest.raises(TensorCheckError, match="empty"):
        t(np.ones((2, 0))).pad((1, 0), "edge")
    with pytest.raises(TensorCheckError, match="Float or Int"):
        x.bool().pad((1, 1), "edge")
    with pytest.raises(ValueError, match="mode must be one of"):
        PadMode("wrap")
    assert repr(PadMode.Reflect) == "PadMode.Reflect"


def test_take_burn_examples():
    x = t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.take(-1, [2, 0, 1]).tolist() == [[3.0, 1.0, 2.0], [6.0, 4.0, 5.0]]
    assert x.take(1, [[0, 2], [1, 0]]).dims() == [2, 2, 2]
    with pytest.raises(TensorCheckError, match="Int tensor"):
        x.take(0, x)
    with pytest.raises(TensorCheckError, match="out of range"):
        x.take(2, [0])


def test_slice_dim_and_max_abs_dims():
    x = t(np.arange(24.0).reshape(2, 3, 4) - 12)
    assert x.slice_dim(1, slice(None, None, -1)).numpy().tolist() == x.numpy()[:, ::-1].tolist()
    assert x.max_abs_dims([0, 1, 2]).tolist() == [[[12.0]]]
    assert x.max_abs_dims([2, -1]).dims() == [2, 3, 1]  # a dim named twice counts once
    with pytest.raises(TensorCheckError, match="out of range"):
        x.slice_dim(3, 0)


def test_one_hot_fill_burn_example_and_checks():
    x = t([[0.0, 2.0], [1.0, -1.0]])
    want = [[[5.0, 0.0, 0.0], [0.0, 0.0, 5.0]], [[0.0, 5.0, 0.0], [0.0, 0.0, 5.0]]]
    assert x.one_hot_fill(3, 5.0, 0.0, -1).tolist() == want
    assert x.int().one_hot_fill(3, 1, 0, 0).dims() == [3, 2, 2]
    with pytest.raises(TensorCheckError, match="num_classes must be >= 1"):
        x.one_hot_fill(0, 1.0, 0.0)
    with pytest.raises(TensorCheckError, match=r"class index -4 out of range \[-3, 3\)"):
        t([-4.0]).one_hot_fill(3, 1.0, 0.0)
    with pytest.raises(TensorCheckError, match="non-integral"):
        x.int().one_hot_fill(3, 1.5, 0)


def test_unsigned_dtypes_exist_and_check_their_range():
    from burn_tensor import INT_DTYPES, DType

    for name, size in (("U16", 2), ("U32", 4), ("U64", 8)):
        dt = DType.from_any(name.lower())
        assert dt is DType[name] and dt.is_int() and dt.size == size and dt in INT_DTYPES
    with pytest.raises(TensorCheckError, match="from_data"):
        Tensor.from_data([-1, 2], DEV, DType.U32)
    big = Tensor.from_data([2**64 - 1], DEV, DType.U64)
    assert big.tolist() == [2**64 - 1]
