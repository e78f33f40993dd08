"""`burn_gpu.dtype_name`: numpy's `dtype.name`, cached (the launch paths read it per op)."""

import numpy as np
import pytest
from burn_gpu import dtype_name


@pytest.mark.parametrize("dt", ["float16", "float32", "float64", "int32", "int64", "bool", "uint8"])
def test_dtype_name_is_numpys_name(dt):
    d = np.dtype(dt)
    assert dtype_name(d) == d.name == dt
    assert dtype_name(d) == dt  # a second read comes from the cache


def test_dtype_name_of_bfloat16():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    assert dtype_name(np.dtype(ml_dtypes.bfloat16)) == "bfloat16"


def test_equal_dtypes_share_a_name():
    # a dtype built from the type and one from the string are equal and hash alike
    assert dtype_name(np.dtype(np.int16)) == dtype_name(np.dtype("int16")) == "int16"
