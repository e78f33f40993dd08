"""The native direct conv for few input channels (`_native_stem`, `_native/stemconv.c`) against
a numpy float64 reference, and bitwise equal for every thread count."""

import numpy as np
import pytest

from burn_ndarray import _native_stem

lib_mod = pytest.importorskip("burn_ndarray._native")


def _ref(x, w, b, s, p):
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    kh, kw = w.shape[2:]
    win = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    win = win[:, :, :: s[0], :: s[1]]
    out = np.einsum("nchwij,ocij->nohw", win, w.astype(np.float64))
    return out if b is None else out + b[None, :, None, None]


CASES = [  # n c h w co kh kw stride padding
    (1, 3, 37, 41, 16, 3, 3, (2, 2), (1, 1)),
    (2, 1, 17, 13, 5, 3, 2, (1, 2), (2, 0)),
    (3, 4, 29, 31, 9, 7, 7, (2, 2), (3, 3)),
    (1, 2, 20, 21, 6, 5, 3, (1, 1), (2, 1)),
]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_stem_matches_float64_and_threads(case, dt):
    lib = lib_mod.lib()
    if lib is None:
        pytest.fail("native library unavailable: " + lib_mod.status())
    n, c, h, w, co, kh, kw, s, p = case
    rng = np.random.default_rng(1)
    x = rng.standard_normal((n, c, h, w)).astype(dt)
    wt = rng.standard_normal((co, c, kh, kw)).astype(dt)
    b = rng.standard_normal(co).astype(dt)
    oh = (h + 2 * p[0] - kh) // s[0] + 1
    ow = (w + 2 * p[1] - kw) // s[1] + 1
    plan = _native_stem.setup(x.shape, wt.shape, s, p, (oh, ow))
    want = _ref(x, wt, b, s, p)
    tol = 1e-4 if dt == np.float32 else 1e-10
    got = {nt: _native_stem.forward(lib, nt, x, wt, b, plan) for nt in (1, 2, 3)}
    np.testing.assert_allclose(got[1], want, rtol=tol, atol=tol)
    assert all(np.array_equal(got[1], g) for g in got.values())
    nob = _native_stem.forward(lib, 1, x, wt, None, plan)
    np.testing.assert_allclose(nob, want - b[None, :, None, None], rtol=tol, atol=tol)
