"""TensorData, Shape, DType, Tolerance and Distribution semantics."""

import pickle

import numpy as np
import pytest
from burn_tensor import Bool, Distribution, DType, Float, Int, Shape, TensorData, Tolerance


# -- DType -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value, expected",
    [
        ("float32", DType.F32),
        ("F64", DType.F64),
        ("i32", DType.I32),
        (np.int64, DType.I64),
        (np.dtype("bool"), DType.BOOL),
        (DType.U8, DType.U8),
        ("float16", DType.F16),
    ],
)
def test_dtype_from_any(value, expected):
    assert DType.from_any(value) is expected


def test_dtype_properties():
    assert DType.F32.kind is Float and DType.I8.kind is Int and DType.BOOL.kind is Bool
    assert DType.F64.size == 8 and DType.F16.size == 2 and DType.U8.size == 1
    assert DType.F32.is_float() and DType.I64.is_int() and DType.BOOL.is_bool()
    assert DType.F32() is DType.F32  # Burn's `dtype()` call style
    assert DType.F32.np == np.float32
    assert repr(DType.I32) == "DType.I32"
    with pytest.raises(TypeError, match="unknown dtype"):
        DType.from_any("complex64")


# -- Shape -----------------------------------------------------------------------------------------
def test_shape():
    s = Shape(2, 3)
    assert s == Shape([2, 3]) == (2, 3)
    assert s() is s and s.dims == [2, 3] and s.num_dims() == 2 and s.rank() == 2
    assert s.num_elements() == 6 and Shape(0, 4).num_elements() == 0 and Shape().num_elements() == 1
    assert repr(s) == "Shape([2, 3])" and str(s) == "[2, 3]"
    assert Shape(np.int64(3)) == (3,)
    with pytest.raises(ValueError, match="must be >= 0"):
        Shape(2, -1)
    with pytest.raises(TypeError, match="must be ints"):
        Shape(2, 1.5)
    with pytest.raises(TypeError, match="must be ints"):
        Shape(True)


# -- TensorData ------------------------------------------------------------------------------------
def test_tensor_data_from_python():
    assert TensorData([[1.0, 2.0]]).dtype is DType.F32
    assert TensorData([1, 2]).dtype is DType.I64
    assert TensorData([True]).dtype is DType.BOOL
    d = TensorData([1, 2, 3, 4], shape=[2, 2], dtype="float64")
    assert d.shape == (2, 2) and d.dtype is DType.F64 and d.rank() == 2 and d.num_elements() == 4
    assert d.to_vec() == [1.0, 2.0, 3.0, 4.0] and d.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(ValueError, match="cannot take shape"):
        TensorData([1, 2, 3], shape=[2, 2])
    with pytest.raises(TypeError, match="ragged"):
        TensorData([[1, 2], [3]])


def test_tensor_data_copies_and_is_contiguous():
    src = np.arange(6.0).reshape(2, 3).T
    d = TensorData(src)
    assert d.array.flags.c_contiguous
    assert d.shape == (3, 2)


def test_tensor_data_bytes_round_trip():
    d = TensorData(np.array([[1.5, -2.0]], np.float32))
    assert len(d.bytes) == 8
    back = TensorData.from_bytes(d.bytes, [1, 2], "float32")
    assert back == d
    with pytest.raises(ValueError, match="needs 8"):
        TensorData.from_bytes(b"\x00" * 7, [1, 2], "float32")
    # little-endian regardless of the source byte order
    be = TensorData(np.array([1, 2], dtype=">i4"))
    assert TensorData.from_bytes(be.bytes, [2], "int32").tolist() == [1, 2]


def test_tensor_data_convert_refuses_out_of_range_ints():
    # numpy's astype wraps (300 -> 44 in int8); a default int32 backend took 3e9 as -1294967296.
    assert TensorData(np.array([-128, 127])).convert("int8").tolist() == [-128, 127]
    assert TensorData([1.9, -1.9, 127.5]).convert("int8").tolist() == [1, -1, 127]
    for data, dt in (
        ([300], "int8"),
        ([-1], "uint8"),
        ([3_000_000_000], "int32"),
        ([3e9], "int32"),
    ):
        with pytest.raises(ValueError, match="do not fit"):
            TensorData(data).convert(dt)


def test_tensor_data_convert():
    d = TensorData([1.7, -1.7, 2.0])
    assert d.convert("int32").tolist() == [1, -1, 2]
    assert d.convert(DType.F64).dtype is DType.F64
    with pytest.raises(ValueError, match="non-finite"):
        TensorData([1.0, float("nan")]).convert("int64")


def test_tensor_data_pickle():
    for d in (TensorData([[1.0, 2.0]]), TensorData([1, 2]), TensorData([True, False])):
        back = pickle.loads(pickle.dumps(d))
        assert back == d and back.dtype is d.dtype


def test_assert_eq_strictness():
    a = TensorData(np.array([1, 2], np.int32))
    b = TensorData(np.array([1, 2], np.int64))
    a.assert_eq(b, strict=False)
    with pytest.raises(AssertionError, match="dtype int32 != int64"):
        a.assert_eq(b, strict=True)
    with pytest.raises(AssertionError, match=r"at \(1,\): 2 != 3"):
        a.assert_eq(TensorData(np.array([1, 3], np.int32)))
    with pytest.raises(AssertionError, match=r"shape \[2\] != \[1, 2\]"):
        a.assert_eq(TensorData(np.array([[1, 2]], np.int32)))
    # NaN equals NaN in assert_eq; floats compare exactly
    TensorData([np.nan, 1.0]).assert_eq(TensorData([np.nan, 1.0]))
    with pytest.raises(AssertionError):
        TensorData([1.0]).assert_eq(TensorData([1.0000001]))
    # lists are accepted as the expectation
    TensorData([1, 2]).assert_eq([1, 2])


def test_assert_eq_reports_first_five_mismatches():
    a = TensorData(np.zeros(10, np.int64))
    with pytest.raises(AssertionError) as err:
        a.assert_eq(TensorData(np.ones(10, np.int64)))
    assert "... 5 more mismatches (10 of 10 elements)" in str(err.value)


def test_assert_approx_eq_nan_inf():
    TensorData([np.nan, np.inf, -np.inf, 1.0]).assert_approx_eq(
        TensorData([np.nan, np.inf, -np.inf, 1.004])
    )
    with pytest.raises(AssertionError):
        TensorData([np.inf]).assert_approx_eq(TensorData([-np.inf]))
    with pytest.raises(AssertionError):
        TensorData([np.nan]).assert_approx_eq(TensorData([1.0]))
    with pytest.raises(AssertionError):
        TensorData([np.inf]).assert_approx_eq(TensorData([3e38]))
    with pytest.raises(AssertionError, match="shape"):
        TensorData([1.0]).assert_approx_eq(TensorData([1.0, 2.0]))


def test_assert_within_range():
    TensorData([0.0, 0.5]).assert_within_range(0.0, 1.0)
    with pytest.raises(AssertionError, match="outside"):
        TensorData([0.0, 1.0]).assert_within_range(0.0, 1.0)


# -- Tolerance (Burn's rule: x == y or |x - y| < max(A, R * max(|x|, |y|))) -------------------------
def test_tolerance_presets():
    assert Tolerance.default() == Tolerance.balanced() == Tolerance(0.005, 1e-5)
    assert Tolerance.permissive() == Tolerance(0.01, 0.01)
    strict = Tolerance.strict()
    assert strict.relative == 0.0
    assert strict.absolute == pytest.approx(64 * np.finfo(np.float32).tiny)
    assert Tolerance.strict("float64").absolute == pytest.approx(64 * np.finfo(np.float64).tiny)


def test_tolerance_rule():
    t = Tolerance.default()
    assert t.approx_eq(1.0, 1.004)  # relative: 0.004 < 0.005 * 1.004
    assert not t.approx_eq(1.0, 1.006)
    assert t.approx_eq(0.0, 9e-6)  # absolute floor near zero
    assert not t.approx_eq(0.0, 2e-5)
    assert t.approx_eq(1000.0, 1004.0)
    # relative uses max(|x|, |y|), so the rule is symmetric
    assert t.approx_eq(1.0, 1.00502) == t.approx_eq(1.00502, 1.0)
    # strict: only (nearly) identical values
    assert Tolerance.strict().approx_eq(1.0, 1.0)
    assert not Tolerance.strict().approx_eq(1.0, 1.0 + 1e-7)
    # the bound is strict (<)
    assert not Tolerance.absolute_(0.5).approx_eq(0.0, 0.5)
    assert Tolerance.absolute_(0.5).approx_eq(0.0, 0.49)
    assert Tolerance.relative_(0.1).approx_eq(10.0, 10.9)


def test_tolerance_builders_and_validation():
    t = Tolerance.rel_abs(0.1, 0.2)
    assert (t.relative, t.absolute) == (0.1, 0.2)
    assert t.set_relative(0.3).relative == 0.3 and t.set_absolute(0.0).absolute == 0.0
    with pytest.raises(ValueError, match="relative"):
        Tolerance(1.5, 0.0)
    with pytest.raises(ValueError, match="absolute"):
        Tolerance(0.1, -1.0)


# -- Distribution ----------------------------------------------------------------------------------
def test_distribution():
    assert Distribution.default() == Distribution.Default()
    assert Distribution.uniform(0, 2) == Distribution.Uniform(0.0, 2.0)
    assert repr(Distribution.normal(0, 1)) == "Distribution.normal(0.0, 1.0)"
    assert repr(Distribution.bernoulli(0.5)) == "Distribution.bernoulli(0.5)"
    with pytest.raises(ValueError, match="low < high"):
        Distribution.uniform(1, 1)
    with pytest.raises(ValueError, match="std >= 0"):
        Distribution.normal(0, -1)
    with pytest.raises(ValueError, match="0 <= p <= 1"):
        Distribution.bernoulli(1.5)
    assert pickle.loads(pickle.dumps(Distribution.normal(1, 2))) == Distribution.normal(1, 2)
