"""OpenCl's FFT runs burn_gpu's kernels, each of its three paths (radix-2 passes, the direct
DFT, Bluestein), not the contract's dense default, and matches numpy float64 on each; and
Autodiff(OpenCl)'s FFT gradients (the rules run OpenCl's FFTs) match numpy float64. The numbers on
every layout and length are the conformance suite's (`suites/signal.py`)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from burn_autodiff import Autodiff
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


def test_autodiff_gradients_match_numpy():
    # L(x) = sum(rfft(x).re * cot) + sum(irfft(2 re + i im)) is linear in x, so its gradient
    # at [row i, col j] is L of the unit signal e_j in row i: numpy float64 gives it exactly
    n = 70
    x = np.random.default_rng(1).normal(size=(3, n))
    cot = np.random.default_rng(2).normal(size=(3, n // 2 + 1))

    def loss_np(row, c):
        s = np.fft.rfft(row)
        return float((s.real * c).sum() + np.fft.irfft(2 * s.real + 1j * s.imag, n=n).sum())

    eye = np.eye(n)
    want = np.array([[loss_np(eye[j], cot[i]) for j in range(n)] for i in range(3)])
    d = Autodiff(OpenCl(DEVICE_TYPE, float_dtype="float64")).device()
    t = Tensor.from_data(x, d).require_grad()
    re, im = signal.rfft(t, 1)  # n = 70: OpenCl's Bluestein path, then its adjoint
    y = signal.irfft(re.mul_scalar(2.0), im, 1, n=n)
    loss = re.mul(Tensor.from_data(cot, d)).sum().add(y.sum())
    np.testing.assert_allclose(t.grad(loss.backward()).numpy(), want, atol=1e-10)
