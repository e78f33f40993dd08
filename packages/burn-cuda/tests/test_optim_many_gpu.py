"""`float_adam_update_many` (`_optim_many.py`): one launch for many parameters gives the bits of
`float_adam_update` per parameter, over chunks of MAX_TENSORS, empty and grid-stride sizes, and
falls back for the layouts and dtypes it does not take."""

from __future__ import annotations

import numpy as np
import pytest
from burn_cuda import Cuda, _optim_many

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_ready")]

HYPER = dict(lr=0.01, beta_1=0.9, beta_2=0.999, epsilon=1e-5)


def _arrays(cp, shapes, dtype, seed):
    rng = np.random.default_rng(seed)
    return [cp.asarray(rng.uniform(0.1, 2.0, s).astype(dtype)) for s in shapes]


def _one_by_one(b, ps, gs, m1s, m2s, time):
    out = [
        b.float_adam_update(
            p, g, None if m1s is None else m1s[i], None if m2s is None else m2s[i],
            HYPER["lr"], HYPER["beta_1"], HYPER["beta_2"], HYPER["epsilon"], time,
        )
        for i, (p, g) in enumerate(zip(ps, gs))
    ]  # fmt: skip
    return [list(t) for t in zip(*out)]


def _many(b, ps, gs, m1s, m2s, time):
    return b.float_adam_update_many(
        ps, gs, m1s, m2s, HYPER["lr"], HYPER["beta_1"], HYPER["beta_2"], HYPER["epsilon"], time
    )


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "shapes",
    [
        [(3, 4), (5,), (1,), (2, 3, 7)],
        [(0,), (4,), (0, 3)],  # empty tensors are left out of the table
        [(7,)] * 70,  # three launches of <= MAX_TENSORS rows
        [(_optim_many.MAX_GRID_X * 256 + 5,), (3,)],  # the grid-stride loop's tail
    ],
    ids=["mixed", "empty", "chunks", "grid-stride"],
)
def test_bits_of_the_one_tensor_kernel(dtype, shapes):
    import cupy as cp

    b = Cuda(float_dtype=dtype)
    ps, gs = _arrays(cp, shapes, dtype, 1), _arrays(cp, shapes, dtype, 2)
    m1s = m2s = None
    for time in (1, 2, 3):
        want = _one_by_one(b, ps, gs, m1s, m2s, time)
        got = _many(b, ps, gs, m1s, m2s, time)
        for g_list, w_list in zip(got, want):
            assert len(g_list) == len(shapes)
            for g, w in zip(g_list, w_list):
                assert g.shape == w.shape and g.dtype == w.dtype
                np.testing.assert_array_equal(cp.asnumpy(g), cp.asnumpy(w))
        ps, m1s, m2s = got
        gs = _arrays(cp, shapes, dtype, 10 + time)


def test_strided_moments_take_the_default_and_float16_the_half_kernel():
    import cupy as cp

    b = Cuda()
    ps, gs = _arrays(cp, [(4, 6)], "float32", 1), _arrays(cp, [(4, 6)], "float32", 2)
    m1 = [cp.asarray(np.full((6, 4), 0.1, np.float32)).T]  # not C-contiguous
    m2 = [cp.asarray(np.full((4, 6), 0.2, np.float32))]
    assert not _optim_many._fits(ps, gs, m1, m2)
    got = _many(b, ps, gs, m1, m2, 2)
    want = _one_by_one(b, ps, gs, m1, m2, 2)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(cp.asnumpy(g[0]), cp.asnumpy(w[0]))
    h = Cuda(float_dtype="float16")
    ps16, gs16 = _arrays(cp, [(5,)], "float16", 1), _arrays(cp, [(5,)], "float16", 2)
    assert _optim_many._fits(ps16, gs16, None, None) == np.float16  # the half kernel
    got = _many(h, ps16, gs16, None, None, 1)
    want = _one_by_one(h, ps16, gs16, None, None, 1)
    np.testing.assert_array_equal(cp.asnumpy(got[0][0]), cp.asnumpy(want[0][0]))
