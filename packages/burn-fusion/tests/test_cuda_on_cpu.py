"""`Fusion(Cuda())` on the CPU stand-in of cupy (burn-cuda's `tests/fake_cupy.py`: the real CUDA C
source built by g++, launched through the driver-launch path as on the GPU): fused kernels,
two outputs, int scalars, a row kernel and a row kernel of two reductions (layer norm) compute
what numpy does, and after the first launch
of a recipe every fused launch is a prepared one (`CudaRuntime.prepare`, issue 35 item 3).
Vector kernels are off: the stand-in's g++ has no float4."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

HELPERS = Path(__file__).resolve().parents[2] / "burn-cuda" / "tests"
if shutil.which("g++") is None:
    pytest.skip("the CUDA stand-in builds kernels with g++, which is not installed", allow_module_level=True)
sys.path.insert(0, str(HELPERS))

from _fusion_testlib import check_scalar_plans, general_launches  # noqa: E402
from burn_fusion import Fusion  # noqa: E402
from burn_tensor import _backend as _tensor_backend  # noqa: E402
from burn_tensor._device import Device  # noqa: E402


@pytest.fixture
def fused_cuda():
    from cpu_backend import cuda_on_cpu_backend

    interned = set(_tensor_backend._Interned._cache)
    devices = set(Device._cache)
    try:
        with cuda_on_cpu_backend() as (cuda, _fake):
            backend = Fusion(cuda)
            device = backend.device()
            st = backend.stream(device.index)
            st.vector_width = 0
            yield device, st
    finally:  # a stand-in Fusion(Cuda()) must not be handed out to a GPU test later
        for k in set(_tensor_backend._Interned._cache) - interned:
            del _tensor_backend._Interned._cache[k]
        for k in set(Device._cache) - devices:
            del Device._cache[k]


def test_fused_kernels_on_the_cuda_runtime_run_prepared_with_numpy_values(fused_cuda):
    device, st = fused_cuda
    assert st.prepare is not None
    rng = np.random.default_rng(4)
    with general_launches(st) as general:
        for step in range(3):
            x, xv = check_scalar_plans(device, rng, (3, 37), 0.5 * (step + 1), step + 2, 3, 9)
            rms = (x / ((x * x).mean_dim(1) + 1e-6).sqrt()).numpy()  # one row kernel
            x64 = xv.astype(np.float64)
            want_rms = x64 / np.sqrt((x64 * x64).mean(1, keepdims=True) + 1e-6)
            np.testing.assert_allclose(rms, want_rms, rtol=1e-4)
            c = x - x.mean_dim(1)  # layer norm: one row kernel of two reductions (_render_rows)
            ln = (c / ((c * c).mean_dim(1) + 1e-5).sqrt()).numpy()
            c64 = x64 - x64.mean(1, keepdims=True)
            want_ln = c64 / np.sqrt((c64 * c64).mean(1, keepdims=True) + 1e-5)
            np.testing.assert_allclose(ln, want_ln, rtol=1e-4, atol=1e-5)
    assert general[0] == 0, general[0]
    assert device.fusion_stats()["reductions_fused"] >= 6


def test_to_device_gradient_under_autodiff_over_fusion_cuda(fused_cuda):
    """float_to_device's backward asks for its input's device: under Autodiff(Fusion(Cuda())) a
    Meta of the Fusion handle had none, and Cuda's device_of failed ('NoneType' has no 'id',
    found by the GPU run of test_autodiff_gradcheck[float_to_device] with
    BURN_FUSION_TEST_INNER=cuda). The rule keeps its input now."""
    from burn_autodiff import Autodiff
    from burn_tensor import Float, Tensor

    device, _ = fused_cuda
    ad = Autodiff(device.backend)
    x = Tensor.from_data(np.arange(6.0, dtype=np.float32).reshape(2, 3), ad.device())
    x = x.require_grad()
    y = ad.float_to_device((x * 2.0).into_primitive(), ad.device())
    grads = (Tensor.from_primitive(y, Float, ad.device()) * 3.0).sum().backward()
    np.testing.assert_array_equal(x.grad(grads).to_data().array, np.full((2, 3), 6.0))
