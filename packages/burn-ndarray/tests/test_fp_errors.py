"""Overflow, division by zero and invalid operations give inf/nan silently (Burn, PyTorch), while
numpy's error state stays the caller's: importing the backend changes nothing process-wide."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_ndarray._fp import quiet
from burn_tensor import Tensor

INF, NAN = math.inf, math.nan
BACKENDS = {"f16": NdArray(float_dtype="float16"), "f32": NdArray(), "f64": NdArray("float64")}


@pytest.fixture(params=list(BACKENDS))
def device(request):
    return BACKENDS[request.param].device()


def test_import_and_use_leave_numpy_error_state_alone():
    code = (
        "import numpy as np\n"
        "before = np.geterr()\n"
        "from burn_ndarray import NdArray\n"
        "from burn_tensor import Tensor\n"
        "t = Tensor.from_data([0.0, 1.0], NdArray().device())\n"
        "(t / 0).log().tolist()\n"
        "assert np.geterr() == before, (before, np.geterr())\n"
        "assert before['over'] == 'warn', before\n"
    )
    subprocess.run([sys.executable, "-W", "error", "-c", code], check=True)


# (expression, hand-derived result); every one raises a flag in plain numpy.
FLAGGED = [
    ("exp", lambda t: t.exp(), [1000.0, -1000.0, 0.0], [INF, 0.0, 1.0]),
    ("log", lambda t: t.log(), [0.0, -1.0, 1.0], [-INF, NAN, 0.0]),
    ("log1p", lambda t: t.log1p(), [-1.0, -2.0], [-INF, NAN]),
    ("sqrt", lambda t: t.sqrt(), [-1.0, 4.0], [NAN, 2.0]),
    ("div", lambda t: t / t.zeros_like(), [1.0, -1.0, 0.0], [INF, -INF, NAN]),
    ("div_scalar", lambda t: t / 0.0, [2.0, 0.0], [INF, NAN]),
    ("recip", lambda t: t.recip(), [0.0, 2.0], [INF, 0.5]),
    ("mul_overflow", lambda t: t * t, [1e200, -1e200], [INF, INF]),
    ("add_overflow", lambda t: t + t, [1e308, -1e308], [INF, -INF]),
    ("sum_overflow", lambda t: t.sum(), [1e308, 1e308], [INF]),
    ("powf", lambda t: t.powf_scalar(-1.0), [0.0, 2.0], [INF, 0.5]),
    ("acos", lambda t: t.acos(), [2.0, 1.0], [NAN, 0.0]),
    ("sin_inf", lambda t: t.sin(), [INF, 0.0], [NAN, 0.0]),
    ("remainder", lambda t: t.remainder(t.zeros_like()), [1.0], [NAN]),
    ("inf_minus_inf", lambda t: t - t, [INF], [NAN]),
    ("mean_inf", lambda t: t.mean(), [INF, -INF], [NAN]),
]


@pytest.mark.parametrize("case", FLAGGED, ids=[c[0] for c in FLAGGED])
def test_flagged_ops_give_inf_nan_under_callers_raise_mode(device, case):
    _, fn, values, expected = case
    big = np.abs(np.asarray(values)) > 1e30
    # Values beyond the dtype's range are inf already in it; use its max value instead.
    fmax = float(np.finfo(device.backend.float_dtype.np).max)
    values = [math.copysign(fmax, v) if b and math.isfinite(v) else v for v, b in zip(values, big)]
    t = Tensor.from_data(np.asarray(values, device.backend.float_dtype.np), device)
    with np.errstate(all="raise"):  # any flag escaping the backend would raise here
        out = fn(t).numpy().astype(np.float64)
        assert np.geterr()["over"] == "raise"
    np.testing.assert_array_equal(out, np.asarray(expected))


def test_float_to_narrower_dtype_overflows_to_inf():
    t = Tensor.from_data(np.array([1e300, -1e300, 1.0]), NdArray("float64").device())
    with np.errstate(all="raise"):
        out = t.cast("float32").numpy()
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [INF, -INF, 1.0])
    # The same rounding when float64 data (or a list of Python floats) lands on a float32
    # device; on a float64 device a Python float is kept as it is (one rounding, to the
    # device's dtype, as Burn's TensorData of f64 values).
    with np.errstate(all="raise"):
        from_f64 = Tensor.from_data(np.array([-1e300, 2.0]), NdArray().device()).tolist()
        from_list = Tensor.from_data([1e300], NdArray().device()).tolist()
        kept = Tensor.from_data([1e300], NdArray("float64").device()).tolist()
    assert from_f64 == [-INF, 2.0] and from_list == [INF] and kept == [1e300]


def test_out_of_range_scalars_round_to_inf_like_the_elements():
    # A scalar becomes the tensor's element type first (Burn's elem conversion): 1e300 is inf in
    # float16/float32, and inf > inf is False.
    for backend, big in ((BACKENDS["f16"], INF), (BACKENDS["f32"], INF), (BACKENDS["f64"], 1e300)):
        t = Tensor.from_data(np.array([1.0, INF], backend.float_dtype.np), backend.device())
        with np.errstate(all="raise"):
            assert t.greater_elem(1e300).tolist() == [False, big == 1e300]
            assert t.lower_equal_elem(-1e300).tolist() == [False, False]
            assert t.mask_fill(t.lower_elem(2.0), 1e300).numpy().tolist() == [big, INF]
            assert t.clamp_max(1e300).numpy().tolist() == [1.0, big]


def test_int_division_by_zero_raises_zero_division_error():
    # Burn panics and PyTorch on the CPU raises; numpy's integer result for x // 0 and x % 0
    # would be a silent 0. The Tensor layer raises a TensorCheckError that is a ZeroDivisionError.
    t = Tensor.from_data([7, -7, 0], NdArray().device())
    with np.errstate(all="raise"):
        with pytest.raises(ZeroDivisionError, match="(?s)'div'.*division by zero"):
            t / 0
        with pytest.raises(ZeroDivisionError, match="(?s)'remainder'.*division by zero"):
            t.remainder(t.zeros_like())
        assert (t / 7).tolist() == [1, -1, 0]  # a divisor without zeros still divides


def test_ops_left_unwrapped_raise_no_flag(device):
    """The NO_FP_FLAGS ops stay bare numpy calls: they must not raise a flag on any value."""
    fmax = float(np.finfo(device.backend.float_dtype.np).max)
    tiny = float(np.finfo(device.backend.float_dtype.np).smallest_subnormal)
    vals = [NAN, INF, -INF, fmax, -fmax, 0.0, -0.0, tiny, 1.0]
    t = Tensor.from_data(np.asarray([vals], device.backend.float_dtype.np), device)
    u = t.flip([1])
    with np.errstate(all="raise"):
        got = {
            "lower": (t < u).tolist()[0],
            "equal": (t == u).tolist()[0],
            "max": t.max().numpy().tolist(),
            "argmax": t.argmax(1).tolist(),
            "abs": t.abs().numpy().tolist()[0],
            "neg": (-t).numpy().tolist()[0],
            "floor": t.floor().numpy().tolist()[0],
            "round": t.round().numpy().tolist()[0],
            "sign": t.sign().numpy().tolist()[0],
            "is_nan": t.is_nan().tolist()[0],
            "mask_fill": t.mask_fill(t.is_inf(), 0.0).numpy().tolist()[0],
            "cat": Tensor.cat([t, u], 0).dims(),
        }
    # u = [1, tiny, -0, 0, -fmax, fmax, -inf, inf, nan]; comparisons with nan are False
    assert got["lower"] == [False, False, True, False, False, True, False, True, False]
    assert got["equal"] == [False, False, False, False, True, False, False, False, False]
    assert math.isnan(got["max"][0]) and got["argmax"] == [[0]]
    assert got["abs"][1:] == [INF, INF, fmax, fmax, 0.0, 0.0, tiny, 1.0]
    assert got["neg"][1:5] == [-INF, INF, -fmax, fmax]
    assert got["floor"][1:] == [INF, -INF, fmax, -fmax, 0.0, -0.0, 0.0, 1.0]
    assert got["round"][3:5] == [fmax, -fmax]
    assert got["sign"][1:] == [1.0, -1.0, 1.0, -1.0, 0.0, 0.0, 1.0, 1.0]
    assert got["is_nan"] == [True] + [False] * 8
    assert got["mask_fill"][1:3] == [0.0, 0.0] and got["cat"] == [2, 9]


def test_quiet_restores_the_callers_state_after_an_exception():
    def boom(x):
        raise ValueError("boom")

    for fast in (True, False):
        with np.errstate(all="raise"):
            with pytest.raises(ValueError):
                quiet(boom, fast)(1)
            assert np.geterr()["divide"] == "raise"
            assert quiet(np.divide, fast)(np.ones(1), np.zeros(1)).tolist() == [INF]
