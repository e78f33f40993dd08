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
