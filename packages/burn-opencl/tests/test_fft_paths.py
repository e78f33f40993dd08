"""OpenCl's FFT runs burn_gpu's kernels, each of its three paths (radix-2 passes, the direct
DFT, Bluestein), not the contract's dense default, and matches numpy float64 on each; and
Autodiff(OpenCl)'s FFT gradients (the rules run OpenCl's FFTs) match NdArray's. The numbers on
every layout and length are the conformance suite's (`suites/signal.py`)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_ndarray import NdArray
from burn_opencl import OpenCl
from burn_tensor import Tensor, signal

#: the device type the suite runs on (conftest.py's `BURN_OPENCL_TEST_DEVICE_TYPE`)
DEVICE_TYPE = os.environ.get("BURN_OPENCL_TEST_DEVICE_TYPE", "cpu")


@pytest.fixture
def launched(monkeypatch):
    """The kernel names the FFT ops ask their runtime for, in order."""
    B = OpenCl(DEVICE_TYPE, float_dtype="float64")
    rt = B.kernels_of(B.float_zeros((1,), B.device(), B.float_dtype))
    names: list = []
    real = type(rt).kernel

    def spy(self, key, name, render):
        if key and key[0] == "fft":
            names.append(name)
        return real(self, key, name, render)

    monkeypatch.setattr(type(rt), "kernel", spy)
    return B, names


@pytest.mark.parametrize(
    "n,path",
    [(16, {"fft_pass"}), (12, {"dft"}), (100, {"chirp_in", "chirp_filter", "chirp_mul"})],
)
def test_each_path_runs_its_kernels(launched, n, path):
    B, names = launched
    x = np.random.default_rng(n).normal(size=(2, n))
    re, im = signal.rfft(Tensor.from_data(x, B.device()), 1)
    want = np.fft.rfft(x, axis=1)
    np.testing.assert_allclose(re.numpy(), want.real, atol=1e-12 * n)
    np.testing.assert_allclose(im.numpy(), want.imag, atol=1e-12 * n)
    assert names[0] == "fft_load" and names[-1] == "fft_store", names
    assert path <= set(names), names
    others = {"fft_pass", "dft", "chirp_in"} - path
    if n != 100:  # Bluestein's M-point transforms are radix-2 passes too
        assert not others & set(names), names


def test_autodiff_gradients_match_ndarray():
    x = np.random.default_rng(1).normal(size=(3, 70))
    cot = np.random.default_rng(2).normal(size=(3, 36))
    grads = []
    for inner in (OpenCl(DEVICE_TYPE, float_dtype="float64"), NdArray(float_dtype="float64")):
        d = Autodiff(inner).device()
        t = Tensor.from_data(x, d).require_grad()
        re, im = signal.rfft(t, 1)
        y = signal.irfft(re.mul_scalar(2.0), im, 1, n=70)
        loss = re.mul(Tensor.from_data(cot, d)).sum().add(y.sum())
        grads.append(t.grad(loss.backward()).numpy())
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-10)
