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
    (2, 1, 5, 3, 3, 1, 1, (3, 1), (2, 4)),  # 1x1, padding wider than the kernel, stride 3
    (1, 4, 6, 7, 5, 5, 5, (1, 1), (4, 4)),  # outputs reading mostly padding
    (1, 3, 30, 30, 2, 11, 11, (4, 4), (5, 5)),  # the largest kernel taken, stride 4
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


def test_stem_threads_bitwise(monkeypatch):
    """Several OpenMP threads (grain lowered so a small conv spreads) give the same bits."""
    lib = lib_mod.lib()
    if lib is None:
        pytest.fail("native library unavailable: " + lib_mod.status())
    monkeypatch.setattr(_native_stem, "MAC_GRAIN", 1)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 45, 38)).astype(np.float32)
    wt = rng.standard_normal((7, 3, 3, 3)).astype(np.float32)
    plan = _native_stem.setup(x.shape, wt.shape, (2, 2), (1, 1), (23, 19))
    one = _native_stem.forward(lib, 1, x, wt, None, plan)
    for nt in (2, 3, 4):
        assert np.array_equal(one, _native_stem.forward(lib, nt, x, wt, None, plan))
    np.testing.assert_allclose(one, _ref(x, wt, None, (2, 2), (1, 1)), rtol=1e-4, atol=1e-4)


def test_backend_routes_rgb_stem(monkeypatch):
    """NdArray's conv2d takes the stem kernel for a 3-channel 3x3 stride-2 conv (the first conv
    of mobilenet/shufflenet), with the module-level checks still in front of it."""
    from burn_ndarray import NdArray
    from burn_tensor import Tensor, TensorCheckError, module

    if lib_mod.lib() is None:
        pytest.fail("native library unavailable: " + lib_mod.status())
    calls = []
    real = _native_stem.forward

    def counted(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(_native_stem, "forward", counted)
    dev = NdArray(num_threads=1).device()
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 3, 96, 96)).astype(np.float32)  # above NATIVE_MIN
    w = rng.standard_normal((16, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)

    def t(a):
        return Tensor.from_data(a, dev)

    got = module.conv2d(t(x), t(w), t(b), stride=2, padding=1).to_data().numpy()
    assert calls, "the RGB stem conv did not take the native stem kernel"
    np.testing.assert_allclose(got, _ref(x, w, b, (2, 2), (1, 1)), rtol=1e-4, atol=1e-4)
    with pytest.raises(TensorCheckError, match="bias must be"):
        module.conv2d(t(x), t(w), t(b[:5]), stride=2, padding=1)
