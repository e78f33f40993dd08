import numpy as np
import pytest
from burn_ndarray import NdArray


@pytest.fixture
def device():
    return NdArray().device()


@pytest.fixture
def dev64():
    """float64 backend: numerics compare tightly against numpy float64 references."""
    d = NdArray(float_dtype="float64").device()
    d.seed(0)
    return d


@pytest.fixture
def autodiff():
    """An autodiff float64 device (a missing burn_autodiff fails the tests, never skips them)."""
    from burn_autodiff import Autodiff

    return Autodiff(NdArray(float_dtype="float64")).device()


@pytest.fixture
def rng():
    return np.random.default_rng(0)
