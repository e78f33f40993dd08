"""The hot path's driver-level launches (`_launch.py`): taken on a real GPU, and the same
results as cupy's RawKernel call for every parameter shape (pointers, long long n, a double
or a negative long long scalar), on odd sizes and from several threads at once."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from burn_cuda import _fast, _launch

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_ready")]


def test_the_driver_launcher_is_used_on_a_gpu():
    import cupy as cp

    assert isinstance(_launch.launcher(cp), _launch.DriverLauncher)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_driver_and_raw_launches_agree(dtype):
    import cupy as cp

    dt = np.dtype(dtype)
    kernels = _fast._Kernels(cp)
    drv, raw = _launch.DriverLauncher(cp), _launch.RawLauncher(cp)
    rng = np.random.default_rng(0)
    for n in (1, 17, 4099, 1 << 20):
        a = cp.asarray((rng.standard_normal(n) * 50).astype(dt))
        b = cp.asarray((rng.standard_normal(n) * 50 + 100).astype(dt))
        grid = (n + 255) // 256
        for go in (drv, raw):
            o = cp.empty(n, dt)
            go.p3i(kernels.get("binary", "add", dt), grid, a, b, o, n)
            np.testing.assert_array_equal(cp.asnumpy(o), cp.asnumpy(a) + cp.asnumpy(b))
            o = cp.empty(n, dt)
            go.p2i(kernels.get("unary", "neg", dt), grid, a, o, n)
            np.testing.assert_array_equal(cp.asnumpy(o), -cp.asnumpy(a))
            o = cp.empty(n, dt)
            s = -2.5 if dt.kind == "f" else -7
            go.p2is(kernels.get("scalar", "mul_scalar", dt), grid, a, o, n, s, dt.kind == "f")
            np.testing.assert_array_equal(cp.asnumpy(o), cp.asnumpy(a) * dt.type(s))


def test_threads_launch_concurrently_without_mixing_parameters():
    import cupy as cp

    dt = np.dtype(np.float32)
    k = _fast._Kernels(cp).get("scalar", "add_scalar", dt)
    drv = _launch.DriverLauncher(cp)
    errors = []

    def work(t):
        try:
            a = cp.full(1000 + t, float(t), dt)
            for _ in range(200):
                o = cp.empty(a.size, dt)
                drv.p2is(k, (a.size + 255) // 256, a, o, a.size, float(t), True)
                cp.cuda.get_current_stream().synchronize()
                if not bool((o == 2 * t).all()):
                    errors.append(t)
                    return
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(repr(exc))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
