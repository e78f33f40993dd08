"""The conformance suite's op counter: counts what ran, and leaves the backend as it found it."""

import numpy as np
from burn_backend_tests import OpCoverage
from burn_ndarray import NdArray
from burn_tensor import Tensor


def test_counts_ops_reached_through_tensor_methods_and_defaults():
    backend = NdArray(float_dtype="float64")
    cov = OpCoverage(backend)
    dev = backend.device()
    with cov.recording():
        t = Tensor.from_data(np.array([1.0, -2.0]), dev)
        assert t.exp().abs().tolist() == [np.exp(1.0), np.exp(-2.0)]
    assert cov.called["float_exp"] == 1 and cov.called["float_abs"] == 1
    assert cov.called["float_from_data"] >= 1
    assert "float_sin" not in cov.called
    assert "float_sin" in cov.missing() and "float_exp" not in cov.missing()
    assert cov.summary().startswith(f"{backend!r}: ")
    assert "subset" in cov.summary()  # the completeness case never ran on it


def test_recording_restores_the_backend():
    backend = NdArray(float_dtype="float64")
    own = {n: vars(backend).get(n) for n in backend.op_table()}  # e.g. NdArray's threaded ops
    cov = OpCoverage(backend)
    with cov.recording():
        pass
    # every op attribute is back as it was (none added, none left wrapped)
    assert {n: vars(backend).get(n) for n in backend.op_table()} == own
    view = backend.kind_ops[Tensor.from_data([1.0], backend.device()).kind]
    assert not getattr(view.exp, "__burn_counting__", False)  # the counting wrapper is gone
    before = dict(cov.called)
    Tensor.from_data([1.0], backend.device()).exp()
    assert dict(cov.called) == before  # nothing counted outside `recording()`


def test_recording_twice_on_a_decorator_keeps_its_own_op_functions():
    # Autodiff installs per-instance op functions; recording must wrap and then restore them.
    from burn_autodiff import Autodiff

    backend = Autodiff(NdArray(float_dtype="float64"))
    before = vars(backend).get("float_exp")
    cov = OpCoverage(backend)
    for _ in range(2):
        with cov.recording():
            x = Tensor.from_data([0.0, 1.0], backend.device())
            assert x.exp().tolist() == [1.0, np.exp(1.0)]
    assert vars(backend).get("float_exp") is before
    assert cov.called["float_exp"] == 2
