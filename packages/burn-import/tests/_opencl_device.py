"""The OpenCL CPU device the importer's OpenCL tests run on, or a skip when there is no OpenCL.

Only "this machine has no OpenCL at all" skips: pyopencl not installed, no OpenCL platform (no
ICD registered), or no platform with a CPU device. Anything else -- a driver that fails to build
a kernel, a broken pyopencl, a `BURN_OPENCL_DEVICE` naming a device that is not there -- is a
broken setup and fails the test instead of hiding behind a skip.
"""

from __future__ import annotations

import importlib.util
import os

import pytest


def opencl_cpu_device():
    """`OpenCl(device_type="cpu").device()`, or `pytest.skip` with the reason when none exists."""
    if importlib.util.find_spec("pyopencl") is None:
        pytest.skip("pyopencl is not installed: no OpenCL here")
    from burn_opencl import OpenCl
    from burn_tensor import NoDeviceError

    try:
        return OpenCl(device_type="cpu").device()
    except NoDeviceError as err:
        if os.environ.get("BURN_OPENCL_DEVICE"):
            raise  # a device asked for by index that is not there is a setup error, not absence
        pytest.skip(f"no OpenCL platform/driver with a CPU device on this machine: {err}")
