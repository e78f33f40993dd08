"""Fixtures of the module-op tests: one environment per float dtype, with its tolerance."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_tensor import Tensor


@dataclass(frozen=True)
class Env:
    """A backend, its default device, and how closely results must match float64 references."""

    backend: NdArray
    tol: float

    @property
    def device(self):
        return self.backend.device()

    @property
    def dtype(self):
        return self.backend.float_dtype.np

    def t(self, a) -> Tensor:
        """numpy (float64 or int) -> Tensor on this device (floats in the backend's dtype)."""
        a = np.asarray(a)
        if a.dtype.kind == "f":
            a = a.astype(self.dtype)
        return Tensor.from_data(a, self.device)

    def p(self, a) -> np.ndarray:
        """numpy float64 -> a backend primitive (for calling backward ops directly)."""
        return np.asarray(a, dtype=self.dtype)

    def close(self, actual, expected) -> None:
        actual = actual.numpy() if isinstance(actual, Tensor) else np.asarray(actual)
        expected = np.asarray(expected, dtype=np.float64)
        assert actual.shape == expected.shape, (actual.shape, expected.shape)
        assert actual.dtype == self.dtype, actual.dtype
        scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
        np.testing.assert_allclose(actual, expected, rtol=self.tol, atol=self.tol * scale)


@pytest.fixture(params=["float64", "float32"])
def env(request) -> Env:
    return Env(NdArray(float_dtype=request.param), 1e-10 if request.param == "float64" else 1e-5)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)
