"""Helpers shared by the burn-fusion tests (imported by name: conftest puts this dir on sys.path).

`BURN_FUSION_TEST_INNER=cuda` runs the tests on Fusion(Cuda()) instead of Fusion(OpenCl()), and
`BURN_OPENCL_TEST_DEVICE_TYPE=gpu` on Fusion(OpenCl("gpu")) (the GPU machine: gpu_run.sh).
"""

from __future__ import annotations

import contextlib
import os

import numpy as np
import pytest
from burn_backend_tests import dtype_configs

INNER = os.environ.get("BURN_FUSION_TEST_INNER", "opencl")
DEVICE_TYPE = os.environ.get("BURN_OPENCL_TEST_DEVICE_TYPE", "cpu")

CONFIGS = dtype_configs()
#: `BURN_FUSION_TEST_HALF=1`: the float16 / bfloat16 configs too (half plans fuse; several
#: minutes each on PoCL, so not in the default run)
if os.environ.get("BURN_FUSION_TEST_HALF", "0") == "1":
    CONFIGS.update(dtype_configs("f16-i32", "bf16-i32"))


def inner_backend(config: str = "f32-i32"):
    """The inner backend under test for a dtype configuration (skips where it cannot run)."""
    opts = CONFIGS[config]
    if INNER == "cuda":
        from burn_tensor import BackendError

        try:
            from burn_cuda import Cuda

            backend = Cuda(**opts)
            backend.device()
        except BackendError as exc:
            pytest.skip(f"Cuda is not usable here: {exc}")
        return backend
    from burn_opencl import OpenCl

    backend = OpenCl(DEVICE_TYPE, **opts)
    if config == "f64-i64" and not backend._rt(None).fp64:
        pytest.skip("this OpenCL device has no float64 (cl_khr_fp64)")
    return backend


def inner_overrides(device, op: str) -> bool:
    """Whether the inner backend of Fusion `device` has its own `op` (Cuda's one-kernel softmax
    family) rather than burn_tensor's default decomposition: Fusion then delegates the op (one
    inner kernel, counted in `ops_unfused`) instead of fusing the default's parts."""
    from burn_tensor import Backend  # its ops are the defaults

    return getattr(type(device.backend.inner), op) is not getattr(Backend, op)


@contextlib.contextmanager
def general_launches(stream):
    """Counts (`[n]`, yielded) the fused launches that go through `stream`'s general `launch`
    rather than a launch the runtime prepared; restores the stream's `launch` afterwards."""
    count = [0]
    real = stream.launch

    def counted(*args, **kw):
        count[0] += 1
        return real(*args, **kw)

    stream.launch = counted
    try:
        yield count
    finally:
        stream.launch = real


def check_scalar_plans(device, rng, shape, s: float, add: int, mul: int, int_high: int):
    """Float and int plans with scalars, against numpy: `a = exp(x * s)` and `b = a + x - 1`
    (one kernel, two outputs), then `(xi + add) * mul - xi` on ints in [-int_high, int_high).
    Returns the float input `(x, xv)` for the caller's further plans."""
    from burn_tensor import Tensor

    xv = rng.standard_normal(shape).astype(np.float32)
    iv = rng.integers(-int_high, int_high, size=shape).astype(np.int32)
    x = Tensor.from_data(xv, device)
    xi = Tensor.from_data(iv, device)
    a = (x * s).exp()
    b = (a + x) - 1.0
    ai, bi = a.numpy(), b.numpy()  # one kernel, two outputs
    want_a = np.exp(xv.astype(np.float64) * s)
    np.testing.assert_allclose(ai, want_a, rtol=1e-5)
    np.testing.assert_allclose(bi, want_a + xv - 1.0, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(((xi + add) * mul - xi).numpy(), (iv + add) * mul - iv)
    return x, xv
