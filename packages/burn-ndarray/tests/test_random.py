"""Random streams belong to one backend's device: seeding `NdArray()` must not reseed
`NdArray(float_dtype="float64")` (another backend, though the same CPU), and one seed gives one
sequence of values."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_tensor import Distribution, Tensor

F32 = NdArray()
F64 = NdArray(float_dtype="float64")


def _draw(backend, n=6):
    return Tensor.random([n], Distribution.default(), backend.device()).numpy().astype(np.float64)


def test_same_seed_gives_numpy_default_rng_stream():
    F64.seed(123)
    got = np.concatenate([_draw(F64, 4), _draw(F64, 3)])
    # The default distribution draws U[0, 1) doubles from a PCG64 generator seeded with the seed.
    np.testing.assert_array_equal(got, np.random.default_rng(123).random(7))
    F64.device().seed(123)
    np.testing.assert_array_equal(np.concatenate([_draw(F64, 4), _draw(F64, 3)]), got)


@pytest.mark.parametrize(("seeded", "other"), [(F32, F64), (F64, F32)], ids=["f32", "f64"])
def test_seeding_one_backend_leaves_the_others_stream_alone(seeded, other):
    other.seed(7)
    first = _draw(other)
    expected_next = _draw(other)

    other.seed(7)
    assert np.array_equal(_draw(other), first)
    seeded.seed(99)  # must neither restart nor replace `other`'s stream
    seeded_values = _draw(seeded)
    np.testing.assert_array_equal(_draw(other), expected_next)

    # And `seeded` really was seeded: its stream restarts at the same values.
    seeded.seed(99)
    np.testing.assert_array_equal(_draw(seeded), seeded_values)


def test_unseeded_backends_draw_different_values():
    a, b = NdArray(int_dtype="int64"), NdArray(int_dtype="int16")
    assert not np.array_equal(_draw(a, 32), _draw(b, 32))


def test_float16_uniform_draws_stay_below_high():
    # Rounding a float64 draw to float16 sends every draw within 2^-12 of 1.0 to 1.0 itself
    # (about 1 in 8000 of U[0, 1)); 200k draws would all but surely hit it without the clip.
    # Hand-derived bounds: float16's largest value below 1 is 1 - 2^-11; below 3, 3 - 2^-9
    # (its spacing in [2, 4)).
    f16 = NdArray(float_dtype="float16")
    f16.seed(0)
    d = Tensor.random([200_000], Distribution.default(), f16.device()).numpy()
    assert d.dtype == np.float16 and d.min() >= 0.0 and d.max() == np.float16(1 - 2**-11)
    u = Tensor.random([200_000], Distribution.uniform(-2, 3), f16.device()).numpy()
    assert u.min() >= -2.0 and u.max() == np.float16(3 - 2**-9)
    # The clip only moves draws that rounded onto `high`: the mean stays that of U[-2, 3).
    assert abs(u.astype(np.float64).mean() - 0.5) < 0.02


def test_uniform_bounds_of_each_float_dtype():
    assert Distribution.default().bounds_in(np.float16) == (0.0, 1 - 2**-11)
    assert Distribution.uniform(-2, 3).bounds_in(np.float32) == (-2.0, 3 - 2**-22)
    assert Distribution.default().bounds_in(np.float64) == (0.0, 1 - 2**-53)
    # bounds that are not values of the dtype: the nearest values inside [low, high)
    lo, hi = Distribution.uniform(0.1, 0.3).bounds_in(np.float16)
    assert lo == float(np.float16(0.1)) + 2**-14 and lo >= 0.1 > lo - 2**-14
    assert hi < 0.3 and np.nextafter(np.float16(hi), np.float16(1)) >= 0.3
    with pytest.raises(ValueError, match="only uniform"):
        Distribution.normal(0, 1).bounds_in(np.float16)


def test_uniform_bounds_of_bfloat16():
    # ml_dtypes comes with the backends that hold bfloat16 (burn-cuda), not with burn-ndarray:
    # burn-ndarray's own isolated test run has no bfloat16 type to ask about
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="bfloat16 needs ml_dtypes (burn-cuda's)")
    assert Distribution.default().bounds_in(ml_dtypes.bfloat16) == (0.0, 1 - 2**-8)
