"""burn-ndarray runs the conformance suite (burn-backend-tests) on itself, over its dtype matrix."""

import os

import pytest
from burn_ndarray import NdArray

CONFIGS = {
    "f32-i32": {},
    "f64-i64": {"float_dtype": "float64", "int_dtype": "int64"},
    # Every op of every size through the threaded paths (chunks of a few elements on 4 threads).
    "f32-i32-threads4": {"num_threads": 4, "parallel_min": 1},
    # float16 (numpy's half; sums, means, scatter-adds and cumsum accumulate in float32): the
    # suite's references and tolerances follow the dtype, ~35 s more on a 2-core machine.
    "f16-i32": {"float_dtype": "float16"},
    # bfloat16 (ml_dtypes' dtype; sums, means and matmuls accumulate in float32 and round once)
    "bf16-i32": {"float_dtype": "bfloat16"},
}
# BURN_NDARRAY_CONFIGS=f16-i32 (a comma-separated list of names) runs only those configs, as
# burn-cuda's BURN_CUDA_CONFIGS does.
_chosen = os.environ.get("BURN_NDARRAY_CONFIGS")
if _chosen:
    CONFIGS = {k: CONFIGS[k] for k in _chosen.split(",")}


@pytest.fixture(scope="session", params=list(CONFIGS), ids=list(CONFIGS))
def burn_backend(request):
    return NdArray(**CONFIGS[request.param])
