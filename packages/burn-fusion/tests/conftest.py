"""The conformance suite runs on Fusion(OpenCl) on the first OpenCL CPU device (PoCL here),
f32/i32 and, where the device has cl_khr_fp64, f64/i64.

`BURN_FUSION_TEST_INNER=cuda` runs it on Fusion(Cuda()) instead, and
`BURN_OPENCL_TEST_DEVICE_TYPE=gpu` on Fusion(OpenCl("gpu")) (the GPU machine: gpu_run.sh).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from _fusion_testlib import CONFIGS, inner_backend


@pytest.fixture(scope="session", params=list(CONFIGS), ids=list(CONFIGS))
def burn_backend(request):
    from burn_fusion import Fusion

    return Fusion(inner_backend(request.param))
