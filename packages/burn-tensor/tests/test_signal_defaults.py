"""The conformance suite's FFT cases (`suites/signal.py`), run on the contract's defaults (dense
twiddle matmuls, `_ops_signal.SignalOps`): NdArray overrides them with numpy.fft, so its own
conformance run never reaches them; here they run on NdArray with those overrides removed (both
dtype configurations), against the suite's numpy float64 references."""

from __future__ import annotations

import pytest
from burn_backend_tests.suites.signal import *  # noqa: F403
from burn_ndarray import NdArray
from burn_tensor._ops_signal import SignalOps


class SignalDefaultsNdArray(NdArray):
    """NdArray whose rfft, irfft and cfft are the burn_tensor defaults."""

    name = "ndarray-signal-defaults"
    rfft = SignalOps.rfft
    irfft = SignalOps.irfft
    cfft = SignalOps.cfft


CONFIGS = {
    "f32-i32": {},
    "f64-i64": {"float_dtype": "float64", "int_dtype": "int64"},
}


@pytest.fixture(scope="module", params=list(CONFIGS), ids=list(CONFIGS))
def burn_backend(request):
    """Overrides the plugin's fixture for this module: the suite runs on the defaults."""
    return SignalDefaultsNdArray(**CONFIGS[request.param])


def test_the_suite_runs_on_the_defaults(burn):
    b = burn.backend
    assert isinstance(b, SignalDefaultsNdArray), b
    assert type(b).cfft is SignalOps.cfft and b.explain("rfft") is not None
