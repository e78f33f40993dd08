"""Fixtures of the nn tests. `BURN_NN_TEST_BACKEND=<entry-point name>` (default `ndarray`) runs
the tests that take these fixtures on another backend, e.g. `cuda` on the GPU machine."""

import os

import numpy as np
import pytest
from burn_ndarray import NdArray


def _backend(**options):
    name = os.environ.get("BURN_NN_TEST_BACKEND", "ndarray")
    if name == "ndarray":
        return NdArray(**options)
    from burn_tensor.backend import get_backend

    return type(get_backend(name))(**options)


@pytest.fixture
def device():
    return _backend().device()


@pytest.fixture
def dev64():
    """float64 backend: numerics compare tightly against numpy float64 references."""
    d = _backend(float_dtype="float64").device()
    d.seed(0)
    return d


@pytest.fixture
def autodiff():
    """An autodiff float64 device (a missing burn_autodiff fails the tests, never skips them)."""
    from burn_autodiff import Autodiff

    return Autodiff(_backend(float_dtype="float64")).device()


@pytest.fixture
def rng():
    return np.random.default_rng(0)
