"""burn-opencl runs the burn_tensor conformance suite on itself: OpenCl on the first OpenCL CPU
device (PoCL here), f32/i32 and, where the device has cl_khr_fp64, f64/i64."""

import pytest
from burn_opencl import OpenCl

CONFIGS = {
    "f32-i32": {},
    "f64-i64": {"float_dtype": "float64", "int_dtype": "int64"},
}


def _backend(name):
    backend = OpenCl("cpu", **CONFIGS[name])
    if name == "f64-i64" and not backend._rt(None).fp64:
        pytest.skip("this OpenCL device has no float64 (cl_khr_fp64)")
    return backend


@pytest.fixture(scope="session", params=list(CONFIGS), ids=list(CONFIGS))
def burn_backend(request):
    return _backend(request.param)
