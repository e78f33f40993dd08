"""The contract's default FFTs (`_ops_signal.SignalOps`: dense twiddle matmuls, what a backend
without its own FFT runs) against numpy float64 `np.fft`, called on NdArray(float64)'s ops."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_tensor import Backend

B = NdArray(float_dtype="float64")
RNG = np.random.default_rng(0)


@pytest.mark.parametrize("n", [6, 4, 9, 1])
def test_default_rfft_irfft_cfft_match_numpy(n):
    x = RNG.normal(size=(3, 6))
    z = Backend.rfft(B, x, 1, n)
    want = np.fft.rfft(x, n=n, axis=1)
    np.testing.assert_allclose(z, np.stack([want.real, want.imag]), atol=1e-12)
    h = np.fft.rfft(x, axis=1) + 1j  # imaginary parts of bins 0 and n / 2 are ignored
    y = Backend.irfft(B, np.stack([h.real, h.imag]), 1, n)
    np.testing.assert_allclose(y, np.fft.irfft(h, n=n, axis=1), atol=1e-12)
    c = x + 1j * x[::-1]
    for inverse, ref in ((False, np.fft.fft), (True, np.fft.ifft)):
        got = Backend.cfft(B, np.stack([c.real, c.imag]), 0, n, inverse)
        want = ref(c, n=n, axis=0)
        np.testing.assert_allclose(got, np.stack([want.real, want.imag]), atol=1e-12)


def test_default_keeps_float32():
    x = RNG.normal(size=(2, 5)).astype(np.float32)
    z = Backend.rfft(NdArray(), x, 1, 5)
    assert z.dtype == np.float32 and z.shape == (2, 2, 3)
