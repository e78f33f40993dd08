"""The Fusion <-> backend seam is the typed `burn_gpu` contract: Fusion compiles and launches
through `inner.runtime(device)` (so a backend's own runtime is the one used, whatever package
defines it), and `device.fusion_stats()` is an explicit hook of burn_tensor's Device, not a
method patched onto it when burn_fusion is imported."""

from __future__ import annotations

import subprocess
import sys
from typing import ClassVar

import numpy as np
import pytest
from burn_fusion import Fusion
from burn_gpu import GpuBackend, Runtime, runtime_of
from burn_ndarray import NdArray
from burn_opencl import OpenCl
from burn_tensor import Tensor


class CountingOpenCl(OpenCl):
    """An OpenCl whose runtime counts the kernels Fusion compiles through it."""

    compiled: ClassVar[list] = []

    def runtime(self, device=None):
        rt = super().runtime(device)
        compile_ = rt.compile

        def counted(source, name):
            CountingOpenCl.compiled.append(name)
            return compile_(source, name)

        rt.compile = counted
        return rt


def test_fusion_compiles_through_the_inner_backends_runtime():
    inner = CountingOpenCl("cpu")
    assert isinstance(inner, GpuBackend) and isinstance(inner.runtime(), Runtime)
    device = Fusion(inner).device()
    x = Tensor.from_data(np.array([0.5, 1.0, 2.0], np.float32), device)
    y = ((x * 3.0).exp() - 1.0).tolist()  # three ops: one fused kernel, compiled through it
    np.testing.assert_allclose(y, np.exp(np.array([0.5, 1.0, 2.0]) * 3.0) - 1.0, rtol=1e-5)
    assert CountingOpenCl.compiled and CountingOpenCl.compiled[-1].startswith("fused_")


def test_a_backend_without_the_contract_is_refused_with_what_it_lacks():
    with pytest.raises(TypeError, match=r"NdArray\(\) compiles no kernels.*runtime\(device\)"):
        runtime_of(NdArray(), NdArray().device())


def test_device_fusion_stats_is_an_explicit_hook_without_burn_fusion():
    """Without importing burn_fusion, a non-Fusion device says what it is not (TypeError), and
    Device's class holds the method (no patching at import)."""
    code = (
        "import sys\n"
        "from burn_ndarray import NdArray\n"
        "from burn_tensor import Device\n"
        "assert 'fusion_stats' in Device.__dict__\n"
        "try:\n"
        "    NdArray().device().fusion_stats()\n"
        "except TypeError as exc:\n"
        "    assert 'not a Fusion backend' in str(exc), exc\n"
        "assert 'burn_fusion' not in sys.modules\n"
        "print('ok')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
