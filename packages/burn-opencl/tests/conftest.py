"""burn-opencl runs the conformance suite (burn-backend-tests) on itself: OpenCl on the first
OpenCL CPU device (PoCL here), f32/i32 and, where the device has cl_khr_fp64, f64/i64.

`BURN_OPENCL_TEST_DEVICE_TYPE=gpu` runs the suite and the gradient checks on the first OpenCL GPU
instead (NVIDIA's driver on the GPU machine: see the README's "On a GPU").
"""

import os

import pytest
from burn_opencl import OpenCl

#: the OpenCL device type the suite runs on
DEVICE_TYPE = os.environ.get("BURN_OPENCL_TEST_DEVICE_TYPE", "cpu")

CONFIGS = {
    "f32-i32": {},
    "f64-i64": {"float_dtype": "float64", "int_dtype": "int64"},
}


def _backend(name):
    backend = OpenCl(DEVICE_TYPE, **CONFIGS[name])
    if name == "f64-i64" and not backend._rt(None).fp64:
        pytest.skip("this OpenCL device has no float64 (cl_khr_fp64)")
    return backend


@pytest.fixture(scope="session", params=list(CONFIGS), ids=list(CONFIGS))
def burn_backend(request):
    return _backend(request.param)
