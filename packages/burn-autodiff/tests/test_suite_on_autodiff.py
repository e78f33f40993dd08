"""The whole conformance suite (burn-backend-tests) on Autodiff(NdArray()): every op of the
table must behave on the decorator exactly as on the backend it wraps (forward values, kinds,
dtypes, devices), module ops and backward primitives included. Gradients are checked by test_gradcheck*.py."""

import pytest
from burn_autodiff import Autodiff
from burn_ndarray import NdArray
from burn_backend_tests.conformance import *  # noqa: F403

CONFIGS = {
    "ad-f32-i32": {},
    "ad-f64-i64": {"float_dtype": "float64", "int_dtype": "int64"},
}


@pytest.fixture(scope="module", params=list(CONFIGS), ids=list(CONFIGS))
def burn_backend(request):
    return Autodiff(NdArray(**CONFIGS[request.param]))
