"""burn_tensor's conformance suite on Cuda() over the CPU stand-in (`cpu_backend.py`): every op
runs burn_cuda's own code (op table, hot path, launch geometry, driver launcher) and its CUDA
kernels run as C on the CPU. f32/i32 by default (~15-20 s of CPU); BURN_CUDA_CPU_CONFIGS
chooses others (a comma-separated list of `f32-i32`, `f64-i64`, `bf16-i32`, `f16-i32`: the
half configs run the half kernels of burn_gpu that `Cuda(float_dtype=...)` launches)."""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu
from burn_backend_tests import DTYPE_CONFIGS
from burn_backend_tests.conformance import *  # noqa: F403
from cpu_backend import cuda_on_cpu_backend

_CHOSEN = os.environ.get("BURN_CUDA_CPU_CONFIGS", "f32-i32").split(",")


@pytest.fixture(scope="module", params=_CHOSEN)
def burn_backend(request):
    if not cuda_on_cpu.available():
        pytest.skip("g++ is not installed: the CUDA kernels cannot run on the CPU")
    with cuda_on_cpu_backend(**DTYPE_CONFIGS[request.param]) as (backend, _fake):
        yield backend
