"""`python -m burn.backend` lists each device's half float types from the backend's spec
(`BackendSpec.half_types`), not from a table in the facade."""

from __future__ import annotations

import subprocess
import sys

from burn_ndarray._spec import SPEC as NDARRAY
from burn_opencl import OpenCl
from burn_opencl._spec import SPEC as OPENCL


def test_ndarray_spec_declares_both_half_types():
    rows = NDARRAY.half_types()
    assert [(r.device, r.dtypes) for r in rows] == [("Cpu", ("float16", "bfloat16"))]


def test_opencl_spec_follows_the_device_and_the_backend():
    rows = OPENCL.half_types()
    assert rows, "no OpenCL device listed"
    for row in rows:
        # float16 only with kernels for it; the reason is named when it is missing
        assert ("float16" in row.dtypes) == OpenCl.supports_f16 and "float16" in row.note
        assert ("bfloat16" in row.dtypes) == OpenCl.supports_bf16


def test_cli_prints_the_half_types_of_each_device():
    out = subprocess.run(
        [sys.executable, "-m", "burn.backend"], capture_output=True, text=True, timeout=300
    ).stdout
    assert "Cpu: half: float16, bfloat16" in out
    assert "half: none (float16: the device lacks cl_khr_fp16" in out or OpenCl.supports_f16
