"""The softmax family where the inner backend overrides it (as Cuda does with one kernel per
row): Fusion then delegates the op instead of fusing the default decomposition. The activation
conformance suites (forward and backward ops) run on Fusion over an OpenCl subclass that
overrides the four ops, f32 and f64, and a softmax there is one unfused op."""

from __future__ import annotations

import numpy as np
import pytest
from _fusion_testlib import CONFIGS, INNER, inner_backend
from burn_fusion import Fusion
from burn_opencl import OpenCl
from burn_tensor import Backend, Tensor, activation
from burn_backend_tests.suites.activation import *
from burn_backend_tests.suites.activation_backward import *

if INNER != "opencl":  # the subclass below is an OpenCl one; Cuda overrides the family itself,
    # so Fusion(Cuda)'s own conformance run is where delegation is exercised on CUDA
    pytest.skip(f"an OpenCl subclass: not built over BURN_FUSION_TEST_INNER={INNER}", allow_module_level=True)


class OpenClWithSoftmax(OpenCl):
    """OpenCl that implements the softmax ops itself: the float-op composition, run by the
    inner backend (so Fusion sees an override and must not fuse the default)."""

    def softmax(self, x, dim):
        return Backend.softmax(self, x, dim)

    def log_softmax(self, x, dim):
        return Backend.log_softmax(self, x, dim)

    def softmax_backward(self, y, grad, dim):
        return Backend.softmax_backward(self, y, grad, dim)

    def log_softmax_backward(self, y, grad, dim):
        return Backend.log_softmax_backward(self, y, grad, dim)


def _overriding(config: str) -> OpenClWithSoftmax:
    base = inner_backend(config)  # skips where the device cannot run the configuration
    return OpenClWithSoftmax(base.device_type, **CONFIGS[config])


@pytest.fixture(scope="module", params=list(CONFIGS), ids=list(CONFIGS))
def burn_backend(request):
    return Fusion(_overriding(request.param))


def test_an_overridden_softmax_is_delegated():
    device = Fusion(_overriding("f32-i32")).device()
    a = np.random.default_rng(0).standard_normal((5, 9)).astype(np.float32)
    x = Tensor.from_data(a, device)
    device.sync()
    before = device.fusion_stats()
    got = activation.softmax(x, 1).numpy()
    after = device.fusion_stats()
    assert after["ops_recorded"] == before["ops_recorded"]  # nothing fused: the inner op ran
    assert after["ops_unfused"] - before["ops_unfused"] == 2  # softmax, then the read
    e = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(1, keepdims=True), rtol=1e-5)
