"""The conformance suite's FFT cases (`suites/signal.py`), run on the contract's defaults (dense
twiddle matmuls, `_ops_signal.SignalOps`): NdArray overrides them with numpy.fft, so its own
conformance run never reaches them; here they run on NdArray with those overrides removed (both
dtype configurations), against the suite's numpy float64 references."""

from __future__ import annotations

from burn_backend_tests.suites.signal import *  # noqa: F403
from burn_backend_tests import backend_fixture
from burn_ndarray import NdArray
from burn_tensor._ops_signal import SignalOps


class SignalDefaultsNdArray(NdArray):
    """NdArray whose rfft, irfft and cfft are the burn_tensor defaults."""

    name = "ndarray-signal-defaults"
    rfft = SignalOps.rfft
    irfft = SignalOps.irfft
    cfft = SignalOps.cfft


#: the plugin's fixture overridden for this module: the suite runs on the defaults
burn_backend = backend_fixture(SignalDefaultsNdArray)


def test_the_suite_runs_on_the_defaults(burn):
    b = burn.backend
    assert isinstance(b, SignalDefaultsNdArray), b
    assert type(b).cfft is SignalOps.cfft and b.explain("rfft") is not None
