"""burn_tensor's conformance suite on Cuda() over the CPU stand-in (`cpu_backend.py`): every op
runs burn_cuda's own code and its CUDA kernels run as C on the CPU."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from burn_tensor.testing.conformance import *  # noqa: F403
from cpu_backend import cuda_on_cpu_backend


@pytest.fixture(scope="module", params=["f32-i32"])
def burn_backend():
    with cuda_on_cpu_backend() as (backend, _fake):
        yield backend
