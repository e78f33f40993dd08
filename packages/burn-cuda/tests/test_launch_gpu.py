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


MIXED = r"""
extern "C" __global__ void mixed(const float* a, double* out, long long n, int k, float f,
                                 double d, unsigned int u, long long neg, int neg32) {
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  out[t] = (double)a[t] * k + (double)f + d + (double)u + (double)neg + (double)neg32;
}
"""


def test_args_packs_every_parameter_kind_as_the_raw_call():
    """`args` (every kernel of `_kernels.launch`, Adam, broadcasts): C int from Python and numpy
    ints, float from numpy float32, double from a Python float, unsigned int above 2^31,
    negative long long and int, on odd sizes; the driver and cupy's RawKernel call agree."""
    import cupy as cp

    k = cp.RawKernel(MIXED, "mixed")
    drv, raw = _launch.DriverLauncher(cp), _launch.RawLauncher(cp)
    rng = np.random.default_rng(1)
    for n in (1, 257, 10_001):
        a = cp.asarray(rng.standard_normal(n).astype(np.float32))
        args_sets = [
            (np.int64(n), np.int32(3), np.float32(0.25), -1.5, np.uint32(3_000_000_000),
             np.int64(-7), np.int32(-9)),
            (n, 3, np.float32(0.25), np.float64(-1.5), np.uint32(3_000_000_000), -7, -9),
        ]  # fmt: skip
        want = a.get().astype(np.float64) * 3 + 0.25 - 1.5 + 3e9 - 7 - 9
        for go in (drv, raw):
            for scalars in args_sets[: 2 if go is drv else 1]:
                out = cp.zeros(n, cp.float64)
                go.args(k, (n + 255) // 256, 256, (a, out, *scalars))
                np.testing.assert_array_equal(out.get(), want)


def test_args_falls_back_to_the_raw_call_for_other_arguments():
    """A numpy bool (no `__index__`) or more than SLOTS arguments: cupy's RawKernel call."""
    import cupy as cp

    src = r"""extern "C" __global__ void flag(bool b, float* o) { o[0] = b ? 1.f : 2.f; }"""
    k = cp.RawKernel(src, "flag")
    out = cp.zeros(1, cp.float32)
    _launch.DriverLauncher(cp).args(k, 1, 1, (np.bool_(True), out))
    assert out.get()[0] == 1.0
