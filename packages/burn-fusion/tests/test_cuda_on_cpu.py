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


def test_prepared_launches_from_their_own_block_and_from_another_thread_agree(fused_cuda):
    """A prepared launch keeps its fixed ints in a parameter block of its own
    (`burn_cuda._prepared`): on the thread that prepared it no `DriverLauncher.args` (the
    per-argument store) runs; from another thread the general path runs. Both compute numpy's
    values for float64 (double scalars), float32 (float scalars) and int32 (int scalars) plans,
    strided (a transposed input: the layout ints) or not."""
    import threading

    from burn_cuda import _launch
    from burn_tensor import Tensor

    device, st = fused_cuda
    rng = np.random.default_rng(7)
    xv = rng.standard_normal((5, 7))
    iv = rng.integers(-9, 9, size=(5, 7)).astype(np.int32)
    x64 = Tensor.from_data(xv, device, dtype=np.float64)
    x32 = Tensor.from_data(xv.astype(np.float32), device)
    t32 = Tensor.from_data(np.ascontiguousarray(xv.T).astype(np.float32), device).swap_dims(0, 1)
    xi = Tensor.from_data(iv, device)
    want64 = np.exp(xv * 0.25) - xv * 3.5
    want32 = np.exp(xv * 0.25) - xv * 3.5
    want_i = (iv + 3) * -2 - iv

    def plans(out):
        out.append((x64 * 0.25).exp() - x64 * 3.5)
        out.append((x32 * 0.25).exp() - x32 * 3.5)
        out.append((t32 * 0.25).exp() - t32 * 3.5)
        out.append((xi + 3) * -2 - xi)
        device.sync()

    calls = [0]
    real = _launch.DriverLauncher.args

    def counted(self, *a):
        calls[0] += 1
        return real(self, *a)

    _launch.DriverLauncher.args = counted
    try:
        for _ in range(2):  # the first planned and prepared, the second from the recipe
            plans([])
        calls[0] = 0
        here = []
        before = device.fusion_stats()["kernels_launched"]
        plans(here)
        launched = device.fusion_stats()["kernels_launched"] - before
        assert launched >= 1 and calls[0] == 0, (launched, calls[0])  # each from its own block
        there = []
        th = threading.Thread(target=plans, args=(there,))
        th.start()
        th.join()
        assert calls[0] == launched, (calls[0], launched)  # another thread: the general path
    finally:
        _launch.DriverLauncher.args = real
    for got in (here, there):
        assert got[0].numpy().dtype == np.float64
        np.testing.assert_allclose(got[0].numpy(), want64, rtol=1e-12)
        np.testing.assert_allclose(got[1].numpy(), want32, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[2].numpy(), want32, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(got[3].numpy(), want_i)
    assert device.fusion_stats()["plans_run_unfused"] == 0


def test_a_stand_in_fusion_is_not_the_one_made_on_another_cupy():
    """A Fusion(Cuda()) made on another cupy (the GPU's, in a GPU run of the whole package) must
    not be handed to the stand-in: decorators are interned by their inner backend's options, and
    the GPU run's Fusion(Cuda()) holds streams and recipes with device buffers, which the stand-in
    then ran on the CPU (SIGSEGV in the GPU run of session 19). Two nested stand-ins play the two
    cupys; the outer one's backends and devices come back when the inner one ends."""
    from burn_autodiff import Autodiff
    from cpu_backend import cuda_on_cpu_backend

    with cuda_on_cpu_backend() as (a, _):
        outer = Autodiff(Fusion(a))
        dev = outer.device()
        with cuda_on_cpu_backend() as (b, _):
            inner = Autodiff(Fusion(b))
            assert inner is not outer
            assert inner.device() is not dev
        assert Autodiff(Fusion(a)) is outer
        assert outer.device() is dev
