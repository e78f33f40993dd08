"""burn-ndarray runs the burn_tensor conformance suite on itself, over its dtype matrix."""

import pytest
from burn_ndarray import NdArray

CONFIGS = {
    "f32-i32": {},
    "f64-i64": {"float_dtype": "float64", "int_dtype": "int64"},
}


@pytest.fixture(scope="session", params=list(CONFIGS), ids=list(CONFIGS))
def burn_backend(request):
    return NdArray(**CONFIGS[request.param])
