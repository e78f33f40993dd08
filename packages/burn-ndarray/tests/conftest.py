"""burn-ndarray runs the burn_tensor conformance suite on itself, over its dtype matrix."""

import os

import pytest
from burn_ndarray import NdArray

CONFIGS = {
    "f32-i32": {},
    "f64-i64": {"float_dtype": "float64", "int_dtype": "int64"},
    # Every op of every size through the threaded paths (chunks of a few elements on 4 threads).
    "f32-i32-threads4": {"num_threads": 4, "parallel_min": 1},
}
# float16 (numpy's half: every op computes in float16 or through float32) is selected by name,
# like burn-cuda's half configs: BURN_NDARRAY_CONFIGS=f16-i32 (a comma-separated list of names).
ALL_CONFIGS = {
    **CONFIGS,
    "f16-i32": {"float_dtype": "float16"},
}
_chosen = os.environ.get("BURN_NDARRAY_CONFIGS")
if _chosen:
    CONFIGS = {k: ALL_CONFIGS[k] for k in _chosen.split(",")}


@pytest.fixture(scope="session", params=list(CONFIGS), ids=list(CONFIGS))
def burn_backend(request):
    return NdArray(**CONFIGS[request.param])
