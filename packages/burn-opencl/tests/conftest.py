"""burn-opencl runs the conformance suite (burn-backend-tests) on itself: OpenCl on the first
OpenCL CPU device (PoCL here), f32/i32 and, where the device has cl_khr_fp64, f64/i64.

`BURN_OPENCL_TEST_HALF=1` adds the float16 and bfloat16 configs (every device: no
cl_khr_fp16 needed). `BURN_OPENCL_TEST_DEVICE_TYPE=gpu` runs the suite and the gradient checks on the first OpenCL GPU
instead (NVIDIA's driver on the GPU machine: see the README's "On a GPU").
"""

import os

import pytest
from burn_backend_tests import dtype_configs
from burn_opencl import OpenCl

#: the OpenCL device type the suite runs on
DEVICE_TYPE = os.environ.get("BURN_OPENCL_TEST_DEVICE_TYPE", "cpu")

CONFIGS = dtype_configs()
#: the half configs: storage with float32 compute, on every device (float16 needs no
#: cl_khr_fp16: vload_half / vstore_half are core OpenCL C). ~9 min each on the 2-core box, so
#: they run when `BURN_OPENCL_TEST_HALF=1` (the CI budget of the default run is exceeded else)
if os.environ.get("BURN_OPENCL_TEST_HALF", "0") == "1":
    CONFIGS.update(dtype_configs("f16-i32", "bf16-i32"))


def _backend(name):
    if name == "f16-i32" and not OpenCl.supports_f16:
        pytest.skip("OpenCl.supports_f16 is False: no float16 on this build")
    if name == "bf16-i32" and not OpenCl.supports_bf16:
        pytest.skip("OpenCl has no bfloat16 support yet (OpenCl.supports_bf16 is False)")
    backend = OpenCl(DEVICE_TYPE, **CONFIGS[name])
    if name == "f64-i64" and not backend._rt(None).fp64:
        pytest.skip("this OpenCL device has no float64 (cl_khr_fp64)")
    return backend


@pytest.fixture(scope="session", params=list(CONFIGS), ids=list(CONFIGS))
def burn_backend(request):
    return _backend(request.param)
