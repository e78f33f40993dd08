"""burn-autodiff's finite-difference gradient checks (float64), run over Autodiff(OpenCl).

The rows (one per differentiable op, module ops included) live in burn-autodiff's tests; the
analytic gradient of Autodiff(OpenCl) must match central differences computed on OpenCl itself
to 1e-6 relative error.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from burn_autodiff import Autodiff, BalancedCheckpointing
from burn_opencl import OpenCl

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "burn-autodiff" / "tests"))

from _autodiff_cases import CASES
from _autodiff_module_cases import MODULE_CASES
from _autodiff_signal_cases import SIGNAL_CASES
from _autodiff_testlib import check_grads

ROWS = CASES + MODULE_CASES + SIGNAL_CASES


@pytest.fixture(scope="module", params=["none", "balanced"])
def ad64(request):
    device_type = os.environ.get("BURN_OPENCL_TEST_DEVICE_TYPE", "cpu")  # as conftest.py
    inner = OpenCl(device_type, float_dtype="float64", int_dtype="int64")
    if not inner._rt(None).fp64:
        pytest.skip("this OpenCL device has no float64 (cl_khr_fp64)")
    if request.param == "balanced":
        return Autodiff(inner, checkpointing=BalancedCheckpointing())
    return Autodiff(inner)


@pytest.mark.parametrize("name,fn,inputs", ROWS, ids=[f"{c[0]}-{i}" for i, c in enumerate(ROWS)])
def test_gradcheck(ad64, name, fn, inputs):
    check_grads(ad64, fn, [np.array(a, dtype=np.float64) for a in inputs])
