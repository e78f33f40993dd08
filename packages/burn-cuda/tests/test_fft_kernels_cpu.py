"""The CUDA rendering of burn_gpu's FFT kernels (`fft_program(dtype, "cuda")`), run on the CPU
stand-in (`cuda_on_cpu`: the exact CUDA text built with g++, every block and thread of the
launch) through the same pipeline OpenCl runs (`burn_gpu.GpuSignalOps`), against numpy float64:
the radix-2 passes, the direct DFT and Bluestein, forward and inverse, real and complex.

Cuda itself runs cuFFT (cupy.fft) for these ops; this keeps the shared kernels' CUDA text right
for a runtime that launches them (and for Cuda, should it switch to them)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu  # noqa: E402
from burn_gpu import GpuSignalOps  # noqa: E402
from fake_cupy import FakeCupy  # noqa: E402

pytestmark = pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed")


class _CudaTextRuntime:
    """The slice of burn_gpu's `Runtime` the FFT ops use, launching CUDA text on the CPU."""

    dialect = "cuda"

    def __init__(self):
        self.cp = FakeCupy(driver=False)
        self.kernels: dict = {}
        self.launched: list = []

    def kernel(self, key, name, render):
        if (key, name) not in self.kernels:
            self.kernels[key, name] = self.cp.RawKernel(render(), name)
        return self.kernels[key, name]

    def call(self, kernel, items, args, group=None, flat=False):
        if items == 0:
            return
        # by-value (value, dtype) pairs as exact numpy scalars: cupy's RawKernel call packs a
        # scalar's own bytes, so an int must be an int32 for an `int` parameter
        conv = [np.dtype(a[1]).type(a[0]) if isinstance(a, tuple) else a for a in args]
        blocks = min(-(-items // 128), 8)  # a capped grid: the kernels' grid-stride loops run
        kernel((blocks,), (128,), tuple(conv))
        self.launched.append(kernel.name)

    def empty(self, shape, dtype):
        return self.cp.empty(shape, dtype)

    def contiguous(self, x, compute=False):
        return self.cp.ascontiguousarray(x)

    def layout(self, x):
        return tuple(s // x.itemsize for s in x.strides), 0

    def astype(self, x, dtype):
        return x if x.dtype == dtype else self.cp.asarray(x.astype(dtype))


class _Host(GpuSignalOps):
    def __init__(self):
        self.rt = _CudaTextRuntime()

    def kernels_of(self, x):
        return self.rt


@pytest.fixture(scope="module")
def host():
    return _Host()


@pytest.mark.parametrize("n", [16, 12, 100])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cuda_text_of_the_fft_kernels(host, n, dtype):
    host.rt.launched.clear()
    rng = np.random.default_rng(n)
    x = rng.normal(size=(2, n, 3))
    tol = dict(atol=(2e-5 if dtype == np.float32 else 1e-12) * n, rtol=0)
    xs = host.rt.cp.asarray(x.astype(dtype))
    z = np.asarray(host.rfft(xs, 1, n))
    want = np.fft.rfft(x, axis=1)
    np.testing.assert_allclose(z, np.stack([want.real, want.imag]), **tol)
    y = np.asarray(host.irfft(host.rt.cp.asarray(z), 1, n))
    np.testing.assert_allclose(y, x, atol=tol["atol"] / n, rtol=0)
    c = np.stack([x, x[::-1]]).astype(dtype)
    for inverse, ref in ((False, np.fft.fft), (True, np.fft.ifft)):
        got = np.asarray(host.cfft(host.rt.cp.asarray(c), 1, n, inverse))
        want = ref(x + 1j * x[::-1], axis=1)
        np.testing.assert_allclose(got, np.stack([want.real, want.imag]), **tol)
    names = set(host.rt.launched)
    path = {16: "fft_pass", 12: "dft", 100: "chirp_mul"}[n]
    assert path in names and "fft_load" in names and "fft_store" in names
