"""Conformance: integer semantics and value checks every backend shares.

- Integer division and remainder by zero raise `ZeroDivisionError` (a `TensorCheckError` too), as
  PyTorch on the CPU does; numpy would return 0.
- Float -> int casts refuse NaN, infinities and values outside the int dtype.
- `arange`, `from_data`, `full` and int scalars refuse values outside the int dtype alike.
- Integer add/sub/mul overflow wraps (two's complement), as in Burn and PyTorch.
- max/min/argmax/argmin of nothing raise a `TensorCheckError` naming the op; the mean of nothing
  is NaN; softmax over an empty dim is the empty tensor (PyTorch).

Data-dependent cases run with `BURN_CHECKS=1` (see `suites.checks_index`).
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import Distribution, Float, Int, Tensor, TensorCheckError, activation


def _irange(burn):
    info = np.iinfo(burn.idt.np)
    return int(info.min), int(info.max)


# -- division by zero ------------------------------------------------------------------------------
DIVISIONS = {
    "div_scalar": (lambda a, b: a / 0, "div"),
    "div_tensor": (lambda a, b: a / b, "div"),
    "remainder_scalar": (lambda a, b: a % 0, "remainder"),
    "remainder_tensor": (lambda a, b: a.remainder(b), "remainder"),
    "floordiv": (lambda a, b: a // b, "remainder"),
    "rtruediv": (lambda a, b: 6 / b, "div"),
}


@pytest.mark.parametrize("name", list(DIVISIONS))
def test_int_division_by_zero_raises(burn, burn_checks_on, name):
    fn, op = DIVISIONS[name]
    a, b = burn.int([7, -7, 6]), burn.int([2, 0, 3])
    with pytest.raises(ZeroDivisionError, match=f"(?s)'{op}'.*integer division by zero"):
        fn(a, b)
    with pytest.raises(TensorCheckError):
        fn(a, b)


def test_int_division_without_zero_still_truncates(burn, burn_checks_on):
    a, b = burn.int([7, -7, 7, -7]), burn.int([2, 2, -2, -2])
    burn.assert_equal(a / b, np.array([3, -3, -3, 3]))  # toward zero (Rust)
    burn.assert_equal(a % b, np.array([1, 1, -1, -1]))  # divisor's sign (torch.remainder)


def test_float_division_by_zero_is_ieee(burn, burn_checks_on):
    burn.assert_close(burn.float([1.0, -1.0]) / 0.0, np.array([np.inf, -np.inf]))


# -- float -> int ---------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_float_to_int_refuses_non_finite(burn, burn_checks_on, value):
    with pytest.raises(TensorCheckError, match="(?s)'int'.*non-finite"):
        burn.float([1.0, value]).int()


def test_float_to_int_refuses_values_outside_the_int_dtype(burn, burn_checks_on):
    lo, hi = _irange(burn)
    dt = burn.fdt.np
    fmax = float(np.nextafter(np.array(np.inf, dt), np.array(0.0, dt)))  # largest finite value
    if fmax < hi:
        # float16 (largest finite 65504) holds no finite value outside int32's range: 2^31 * 4
        # would be inf there, which the non-finite check refuses instead. Its extremes convert.
        burn.assert_equal(burn.float([fmax, -fmax]).int(), np.array([int(fmax), -int(fmax)]))
        return
    too_big = float(hi) * 4.0  # exactly representable, beyond any int dtype's range after trunc
    with pytest.raises(TensorCheckError, match=rf"(?s)'int'.*do not fit {burn.idt.value}"):
        burn.float([0.0, too_big]).int()
    with pytest.raises(TensorCheckError, match=rf"(?s)'int'.*do not fit {burn.idt.value}"):
        burn.float([float(lo) * 4.0]).int()


def test_float_to_int_truncates_in_range_values(burn, burn_checks_on):
    x = [2.9, -2.9, 0.5, 1e4]
    # [2, -2, 0, 10000] in float32/float64; bfloat16 stores 1e4 as 9984 (8 significant bits), so
    # the reference truncates the stored values
    burn.assert_equal(burn.float(x).int(), np.trunc(burn.ref(x)).astype(np.int64))
    burn.assert_equal(burn.float([2.9, -2.9, 0.5, 1e3]).int(), np.array([2, -2, 0, 1000]))


# -- out-of-range integers at creation -------------------------------------------------------------
def test_arange_refuses_values_past_the_int_dtype_like_from_data(burn):
    lo, hi = _irange(burn)
    with pytest.raises(TensorCheckError, match=rf"(?s)'arange'.*do not fit {burn.idt.value}"):
        Tensor.arange(hi - 1, hi + 2, burn.device)
    with pytest.raises(TensorCheckError, match=rf"(?s)'arange_step'.*do not fit {burn.idt.value}"):
        Tensor.arange_step(lo + 2, lo - 3, -2, burn.device)
    with pytest.raises(TensorCheckError, match=rf"(?s)'from_data'.*do not fit {burn.idt.value}"):
        Tensor.from_data([hi + 1], burn.device)
    with pytest.raises(TensorCheckError, match=rf"(?s)'full'.*do not fit {burn.idt.value}"):
        Tensor.full([2], hi + 1, burn.device)
    # the last representable values are fine
    burn.assert_equal(Tensor.arange(hi - 1, hi + 1, burn.device), np.array([hi - 1, hi]))
    burn.assert_equal(Tensor.arange_step(lo + 2, lo - 1, -2, burn.device), np.array([lo + 2, lo]))


def test_int_scalars_outside_the_dtype_raise(burn):
    _, hi = _irange(burn)
    for op in ("add", "mul", "sub"):
        with pytest.raises(TensorCheckError, match=rf"(?s)'{op}'.*scalar {hi + 1} does not fit"):
            getattr(burn.int([1]), op)(hi + 1)


def test_int_add_and_mul_overflow_wrap(burn):
    lo, hi = _irange(burn)
    bits = np.iinfo(burn.idt.np).bits
    burn.assert_equal(burn.int([hi]) + burn.int([1]), np.array([lo]))
    burn.assert_equal(burn.int([hi]) + 1, np.array([lo]))
    burn.assert_equal(burn.int([lo]) - 1, np.array([hi]))
    quarter = 1 << (bits - 2)
    burn.assert_equal(burn.int([quarter, 3]) * burn.int([4, 5]), np.array([0, 15]))
    burn.assert_equal(burn.int([hi]) * 2, np.array([-2]))


# -- empty reductions ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", [Float, Int])
@pytest.mark.parametrize("op", ["max", "min", "max_abs"])
def test_reductions_of_nothing_name_the_op(burn, op, kind):
    t = burn.tensor(np.zeros(0), kind)
    with pytest.raises(TensorCheckError, match=f"(?s)'{op}'.*shape \\[0\\] is empty"):
        getattr(t, op)()


@pytest.mark.parametrize("kind", [Float, Int])
@pytest.mark.parametrize(
    "op", ["max_dim", "min_dim", "argmax", "argmin", "max_dim_with_indices", "min_dim_with_indices"]
)
def test_dim_reductions_over_an_empty_dim_name_the_op(burn, op, kind):
    t = burn.tensor(np.zeros((2, 0)), kind)
    with pytest.raises(TensorCheckError, match=f"(?s)'{op}'.*dim 1 of shape \\[2, 0\\] is empty"):
        getattr(t, op)(1)
    # reducing a non-empty dim of a tensor with no elements is fine: an empty result
    out = getattr(burn.tensor(np.zeros((0, 3)), kind), op)(1)
    assert (out[0] if isinstance(out, tuple) else out).dims() == [0, 1]


def test_mean_of_nothing_is_nan(burn):
    burn.assert_close(burn.float(np.zeros(0)).mean(), np.array([np.nan]))
    burn.assert_close(burn.float(np.zeros((2, 0))).mean_dim(1), np.full((2, 1), np.nan))
    with pytest.raises(TensorCheckError, match="(?s)'mean'.*empty"):
        burn.int(np.zeros(0, np.int64)).mean()


@pytest.mark.parametrize("fn", ["softmax", "log_softmax", "quiet_softmax"])
def test_softmax_over_an_empty_dim_is_empty(burn, fn):
    out = getattr(activation, fn)(burn.float(np.zeros((2, 0))), 1)
    burn.assert_close(out, np.zeros((2, 0)))


# -- traps ----------------------------------------------------------------------------------------
def test_distribution_default_works_without_a_call(burn):
    for dist in (Distribution.Default, Distribution.Default(), Distribution.default()):
        v = Tensor.random([64], dist, burn.device).numpy()
        assert v.shape == (64,) and v.dtype == burn.fdt.np
        assert v.min() >= 0.0 and v.max() < 1.0


def test_random_refuses_an_uncalled_distribution_constructor(burn):
    with pytest.raises(TensorCheckError, match="(?s)'random'.*expected a Distribution"):
        Tensor.random([2], Distribution.uniform, burn.device)


@pytest.mark.parametrize("name", ["Int", "int", "INT"])
def test_kinds_given_by_name(burn, name):
    burn.assert_equal(Tensor.full([2], 3, burn.device, name), np.array([3, 3]))
    burn.assert_equal(Tensor.zeros([1], burn.device, name), np.array([0]))


def test_unknown_kind_names_are_a_clear_error(burn):
    with pytest.raises(TensorCheckError, match="(?s)'full'.*kind must be Float, Int or Bool"):
        Tensor.full([2], 3, burn.device, "Integer")
    with pytest.raises(TensorCheckError, match="(?s)'zeros'.*'int64' is a dtype: pass dtype="):
        Tensor.zeros([2], burn.device, "int64")
