"""Bool any / all on Cuda run burn_gpu's max / min kernels (`_bool_reduce`), not cupy's
reductions (on the CPU stand-in): values against numpy over dims, geometries (rows, long rows,
inner strides), densities, a transposed view, and the empty cases (cupy's fallback: all over
nothing is True)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_backend import cuda_on_cpu_backend  # noqa: E402

CASES = [((3, 5), 0), ((3, 5), 1), ((2, 300), 1), ((4, 70, 3), 1), ((2, 3, 4, 129), 3), ((1, 1), 0)]


@pytest.mark.parametrize("shape, dim", CASES)
@pytest.mark.parametrize("density", [0.0, 0.5, 0.97, 1.0])
def test_any_all_match_numpy(shape, dim, density):
    rng = np.random.default_rng(len(shape) * 7 + dim)
    a = rng.random(shape) < density
    with cuda_on_cpu_backend() as (be, fake):
        x = fake.asarray(a)
        fake.launches.clear()
        got = [be.bool_any_dim(x, dim), be.bool_all_dim(x, dim), be.bool_any(x), be.bool_all(x)]
        names = [launch.name for launch in fake.launches]
        got = [np.asarray(g) for g in got]
    np.testing.assert_array_equal(got[0], a.any(axis=dim, keepdims=True))
    np.testing.assert_array_equal(got[1], a.all(axis=dim, keepdims=True))
    assert got[2].tolist() == [a.any()] and got[3].tolist() == [a.all()]
    # one burn_gpu kernel each, the tree form for long last-dim rows
    assert [n.split("_")[0] for n in names] == ["max", "min", "max", "min"], names


def test_a_transposed_view():
    a = np.random.default_rng(1).random((6, 9)) < 0.5
    with cuda_on_cpu_backend() as (be, fake):
        x = fake.asarray(a).T
        all1, any0 = np.asarray(be.bool_all_dim(x, 1)), np.asarray(be.bool_any_dim(x, 0))
    np.testing.assert_array_equal(all1, a.T.all(axis=1, keepdims=True))
    np.testing.assert_array_equal(any0, a.T.any(axis=0, keepdims=True))


def test_empty_dims_take_the_fallback():
    with cuda_on_cpu_backend() as (be, fake):
        x = fake.asarray(np.zeros((3, 0), bool))
        got = [np.asarray(v).tolist() for v in (be.bool_all_dim(x, 1), be.bool_any_dim(x, 1),
                                                 be.bool_all(x), be.bool_any(x))]  # fmt: skip
    assert got == [[[True], [True], [True]], [[False], [False], [False]], [True], [False]]
