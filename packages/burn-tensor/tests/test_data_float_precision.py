"""Python floats reach a float64 tensor (or TensorData) with their own values: they were
rounded to float32 first (0.1 -> 0.10000000149011612), found by the FFT gradient rules, whose
bin weights (2 / 70, ...) are built from Python floats and were 1e-8 off in float64."""

from __future__ import annotations

import numpy as np
from burn_ndarray import NdArray
from burn_tensor import DType, Tensor, TensorData

VALUES = [0.1, 2 / 70, 1 / 3]


def test_tensordata_with_a_float64_dtype_keeps_python_floats():
    assert TensorData(VALUES, (3,), "float64").array.tolist() == VALUES
    assert TensorData([VALUES], dtype=DType.F64).array.tolist() == [VALUES]


def test_from_data_on_float64_keeps_python_floats():
    assert Tensor.from_data(VALUES, NdArray(float_dtype="float64").device()).tolist() == VALUES
    assert Tensor.from_data([VALUES], NdArray().device(), dtype=DType.F64).tolist() == [VALUES]


def test_float32_and_ints_are_unchanged():
    d = NdArray().device()
    assert TensorData(VALUES).array.dtype == np.float32
    got = Tensor.from_data(VALUES, d)
    assert got.dtype is DType.F32 and got.numpy().tolist() == np.float32(VALUES).tolist()
    ints = Tensor.from_data([[1, 2], [3, 4]], d)
    assert ints.dtype is DType.I32 and ints.tolist() == [[1, 2], [3, 4]]
    assert TensorData([1, 2]).array.dtype.kind == "i"


def test_half_types_round_once_from_the_python_value():
    # 1 + 2^-11 + 2^-40 rounds up in float16 from the exact value; through float32 first it
    # is first rounded to 1 + 2^-11 (a tie), which float16 rounds down to even: 1.0
    v = 1 + 2**-11 + 2**-40
    got = Tensor.from_data([v], NdArray(float_dtype="float16").device()).tolist()[0]
    assert got == float(np.float16(v)) == 1 + 2**-10
