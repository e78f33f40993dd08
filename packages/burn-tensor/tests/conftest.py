"""Core tests of burn_tensor run on NdArray (a dev dependency of the workspace)."""

import pytest


@pytest.fixture(scope="session")
def device():
    from burn_ndarray import NdArray

    return NdArray().device()


@pytest.fixture(scope="session")
def device64():
    from burn_ndarray import NdArray

    return NdArray(float_dtype="float64", int_dtype="int64").device()
