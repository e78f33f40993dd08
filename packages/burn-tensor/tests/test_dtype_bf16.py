"""DType.BF16: names, kind and size without ml_dtypes; host data through ml_dtypes' bfloat16
(TensorData from lists, bytes, conversions, comparisons, printing); backends without bfloat16
refuse it in the constructor; a clear ImportError when ml_dtypes is missing."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from burn_tensor import FLOAT_DTYPES, DType, Float, TensorData

ml_dtypes = pytest.importorskip("ml_dtypes")


def test_names_kind_size():
    assert DType.from_any("bfloat16") is DType.BF16
    assert DType.from_any("bf16") is DType.BF16 and DType.from_any("BF16") is DType.BF16
    assert DType.BF16.kind is Float and DType.BF16.is_float() and DType.BF16.size == 2
    assert DType.BF16 in FLOAT_DTYPES and repr(DType.BF16) == "DType.BF16"
    assert DType.BF16.np == np.dtype(ml_dtypes.bfloat16)
    assert DType.from_np(np.dtype(ml_dtypes.bfloat16)) is DType.BF16
    assert DType.from_any(ml_dtypes.bfloat16) is DType.BF16


def test_tensor_data_round_trips():
    d = TensorData([1.0, 2.5, -3.0, 0.1], dtype="bfloat16")
    assert d.dtype is DType.BF16 and d.array.dtype == ml_dtypes.bfloat16
    # 0.1 rounds to the nearest bfloat16: 0.10009765625 (8 significant bits)
    assert d.convert("float64").array.tolist() == [1.0, 2.5, -3.0, 0.10009765625]
    assert len(d.bytes) == 8
    back = TensorData.from_bytes(d.bytes, [4], "bf16")
    assert back == d and back.dtype is DType.BF16
    assert d.convert("int32").array.tolist() == [1, 2, -3, 0]
    d.assert_approx_eq(TensorData([1.0, 2.5, -3.0, 0.1]))
    d.assert_eq(back)
    nan = TensorData(np.array([1.0, np.nan], ml_dtypes.bfloat16))
    assert nan == TensorData(np.array([1.0, np.nan], ml_dtypes.bfloat16))
    assert TensorData(np.ones((2, 2), ml_dtypes.bfloat16)).dtype is DType.BF16
    assert str(TensorData([1.5, -2.0], dtype="bfloat16")) == "[1.5, -2.0]"


def test_rounding_is_to_nearest_even():
    # 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1.0)
    vals = [1.0 + 2**-8, 1.0 + 3 * 2**-8, 3.0e38, -0.0]
    got = TensorData(vals, dtype="float64").convert("bfloat16").convert("float64").array
    assert got.tolist()[:2] == [1.0, 1.0 + 2**-6]
    assert np.isinf(got[2]) is np.False_ and got[2] == pytest.approx(3.0e38, rel=4e-3)
    assert np.signbit(got[3])


def test_backends_without_bf16_refuse_it():
    # NdArray and OpenCl run bfloat16 now; a backend that does not set supports_bf16 refuses it
    pytest.importorskip("pyopencl", reason="burn-opencl's driver binding is not installed")
    from burn_opencl import OpenCl

    assert OpenCl(float_dtype="bfloat16").float_dtype.value == "bfloat16"

    class NoBf16(OpenCl):
        supports_bf16 = False

    with pytest.raises(ValueError, match="NoBf16: float_dtype bfloat16 is not supported"):
        NoBf16(float_dtype="bfloat16")


def test_missing_ml_dtypes_is_a_clear_import_error():
    code = (
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "from burn_tensor import DType\n"
        "print(DType.BF16.kind, DType.BF16.size)\n"
        "try:\n    DType.BF16.np\nexcept ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == "Float 2"
    assert out[1].startswith("DType.BF16 needs ml_dtypes") and "burn-tensor[bf16]" in out[1]


def test_to_full_precision_widens_both_half_types_to_float32():
    # Burn's FullPrecision of f16 and bf16 is f32; a bf16 tensor (a cast on NdArray, which
    # stores it through ml_dtypes) used to come back unchanged. float32/float64 stay as they are.
    from burn_ndarray import NdArray
    from burn_tensor import Tensor

    dev = NdArray().device()
    base = Tensor.from_data([1.5, -2.25, 0.1], dev)
    for half in (DType.F16, DType.BF16):
        full = base.cast(half).to_full_precision()
        assert full.dtype is DType.F32
        # the values are the half-rounded ones, widened exactly
        want = np.array([1.5, -2.25, 0.1]).astype(half.np).astype(np.float64)
        assert full.numpy().astype(np.float64).tolist() == want.tolist()
    assert base.to_full_precision().dtype is DType.F32
    f64 = Tensor.from_data(np.array([1.0]), NdArray(float_dtype="float64").device())
    assert f64.to_full_precision().dtype is DType.F64
