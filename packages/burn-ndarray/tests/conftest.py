"""burn-ndarray runs the burn_tensor conformance suite on itself, over its dtype matrix."""

import pytest
from burn_ndarray import NdArray

CONFIGS = {
    "f32-i32": {},
    "f64-i64": {"float_dtype": "float64", "int_dtype": "int64"},
    # Every op of every size through the threaded paths (chunks of a few elements on 4 threads).
    "f32-i32-threads4": {"num_threads": 4, "parallel_min": 1},
}


@pytest.fixture(scope="session", params=list(CONFIGS), ids=list(CONFIGS))
def burn_backend(request):
    return NdArray(**CONFIGS[request.param])
