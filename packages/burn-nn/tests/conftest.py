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
def need():
    """`need("conv2d", ...)` skips when the NdArray backend does not implement an op yet."""

    def check(*ops):
        missing = [op for op in ops if op in NdArray.missing_ops()]
        if missing:
            pytest.skip(f"NdArray lacks {missing} (module ops in progress)")

    return check


@pytest.fixture
def autodiff():
    """An autodiff float64 device, or skip when burn_autodiff is not ready."""
    import burn_autodiff

    ad = getattr(burn_autodiff, "Autodiff", None)
    if ad is None:
        pytest.skip("burn_autodiff.Autodiff not available yet")
    return ad(NdArray(float_dtype="float64")).device()


@pytest.fixture
def rng():
    return np.random.default_rng(0)
