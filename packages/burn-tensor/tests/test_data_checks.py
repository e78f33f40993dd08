"""The data-dependent checks' switch (`checks_force_sync`, `BURN_CHECKS`) and the error types.

The conformance suite (`_suite_checks_index`, `_suite_checks_values`) checks what every backend
raises under `BURN_CHECKS=1`; these tests check who checks by default.
"""

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_ndarray import NdArray
from burn_tensor import Tensor, TensorCheckError, TensorZeroDivisionError, checks


class SyncNdArray(NdArray):
    """NdArray declaring itself asynchronous, as a GPU backend does."""

    name = "sync-ndarray"
    checks_force_sync = True


@pytest.fixture
def no_env(monkeypatch):
    monkeypatch.delenv("BURN_CHECKS", raising=False)


def _bad_select(device):
    x = Tensor.from_data(np.arange(6.0).reshape(2, 3), device)
    return x.select(1, Tensor.from_ints([0, 5], device))


def test_cpu_backends_check_by_default(no_env):
    assert not NdArray().checks_force_sync
    assert checks.data_checks_enabled(NdArray())
    for device in (NdArray().device(), Autodiff(NdArray()).device()):
        with pytest.raises(TensorCheckError, match="'select'"):
            _bad_select(device)


def test_a_backend_that_would_sync_skips_the_checks_unless_asked(no_env, monkeypatch):
    for backend in (SyncNdArray(), Autodiff(SyncNdArray())):
        assert not checks.data_checks_enabled(backend), backend
        # No TensorCheckError: the Tensor layer read nothing; the backend's own error remains.
        with pytest.raises(IndexError):
            _bad_select(backend.device())
        with monkeypatch.context() as m:
            m.setenv("BURN_CHECKS", "1")
            assert checks.data_checks_enabled(backend)
            with pytest.raises(TensorCheckError, match="(?s)'select'.*index 5 out of range"):
                _bad_select(backend.device())


@pytest.mark.parametrize("value", ["0", "off", "false"])
def test_burn_checks_0_turns_them_off_everywhere(monkeypatch, value):
    monkeypatch.setenv("BURN_CHECKS", value)
    assert not checks.data_checks_enabled(NdArray())
    d = NdArray().device()
    # an integer division by zero then gives numpy's result instead of raising
    assert (Tensor.from_ints([4], d) / Tensor.from_ints([2], d)).tolist() == [2]


def test_zero_division_is_both_error_families(device):
    with pytest.raises(TensorZeroDivisionError) as info:
        Tensor.from_ints([1, 2], device) % 0
    assert isinstance(info.value, ZeroDivisionError)
    assert isinstance(info.value, TensorCheckError)
    assert info.value.op == "remainder"


def test_public_check_indices_names_the_caller(device):
    t = Tensor.from_ints([0, 7], device)
    with pytest.raises(TensorCheckError, match=r"(?s)'MyLoss'.*target 7 out of range for dim 1"):
        checks.check_indices("MyLoss", t, 1, 4, "target")
    checks.check_indices("MyLoss", t, 1, 8, "target")  # in range: no error


# -- mismatch messages name backend, dtype and device ------------------------------------------------
def test_float32_vs_float64_names_both_backends_and_dtypes():
    a = Tensor.ones([2], NdArray().device())
    b = Tensor.ones([2], NdArray(float_dtype="float64").device())
    with pytest.raises(TensorCheckError) as info:
        a + b
    msg = str(info.value)
    assert "lhs is float32 on Cpu of NdArray()" in msg
    assert "rhs is float64 on Cpu of NdArray(float_dtype='float64')" in msg
    assert ".to_device(" in msg


def test_ndarray_vs_autodiff_says_how_to_cross():
    a = Tensor.ones([2], NdArray().device())
    b = Tensor.ones([2], Autodiff(NdArray()).device())
    for fn in (lambda: a + b, lambda: b.matmul(a.reshape([2, 1])), lambda: Tensor.cat([b, a], 0)):
        with pytest.raises(TensorCheckError) as info:
            fn()
        msg = str(info.value)
        assert "Cpu of Autodiff(NdArray())" in msg and "Cpu of NdArray()" in msg, msg
        assert "Tensor.from_inner" in msg and ".inner()" in msg, msg
