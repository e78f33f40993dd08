"""burn_gpu's direct conv2d kernels (`dconv_fwd`, `dconv_dx`, `dconv_dw` + the ordered column
sum) through OpenCl's module ops on PoCL, against numpy float64: the guide model's two convs at
batch 3 (c_in = 1, and 8 -> 16), odd sizes with stride / padding / dilation, a bias and none,
float32 and float64, an input read at an element offset; the weight gradient bit-identical across
runs. `BURN_GPU_CONV_DIRECT=1` routes a CPU device to them (by default only GPUs take them);
`0` keeps im2col. `f64_odd_mixed` failed (zero partials) when the weight gradient's staging
loops let some items of a group skip a loop others ran inside the tile loop's barriers: PoCL
mis-ran that; every item now runs the same rounds. Three programs are built (a cold PoCL build is ~0.5 s per kernel), so the
shapes share (dtype, c_out, c_in, kh, kw) where they can."""

from __future__ import annotations

import numpy as np
import pytest
from burn_backend_tests.reference import conv as ref
from burn_opencl import OpenCl
from burn_opencl._array import ClArray
from burn_tensor.ops import ConvOptions

B = OpenCl("cpu")
B64 = OpenCl("cpu", float_dtype="float64", int_dtype="int64")
RT = B._rt(None)


def _down(backend, p):
    return np.asarray(backend.float_into_data(p).array, np.float64)



CASES = {
    # name: (dtype, n, c_in, c_out, (h, w), (kh, kw), stride, padding, dilation, bias)
    "guide_conv1": ("float32", 3, 1, 8, (28, 28), (3, 3), (1, 1), (0, 0), (1, 1), True),
    "guide_conv2": ("float32", 3, 8, 16, (26, 26), (3, 3), (1, 1), (0, 0), (1, 1), True),
    "c1_odd_stride2_pad1_dil2": ("float32", 2, 1, 8, (9, 7), (3, 3), (2, 2), (1, 1), (2, 2), False),
    # 2 output channels: the staged gradient rows (2 x 64 pixels) are fewer than the group's
    # items, and the one chunk spans 3 pixel tiles (PoCL once gave zeros here)
    "f64_odd_mixed": ("float64", 2, 3, 2, (13, 11), (3, 3), (2, 1), (1, 2), (2, 1), False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_direct_conv_passes_against_numpy_float64(monkeypatch, name):
    monkeypatch.setenv("BURN_GPU_CONV_DIRECT", "1")
    dt, n, ci, co, hw, k, stride, padding, dilation, has_bias = CASES[name]
    backend = B if dt == "float32" else B64
    rt = backend._rt(None)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((n, ci, *hw))
    w = rng.standard_normal((co, ci, *k))
    bias = rng.standard_normal(co)
    out0, _, _ = ref.conv2d_passes(x, w, stride, padding, dilation, None)
    g = rng.standard_normal(out0.shape)
    want, want_dx, want_dw = ref.conv2d_passes(x, w, stride, padding, dilation, g)
    if has_bias:
        want = want + bias[None, :, None, None]
    if dt == "float64":  # x read at an element offset: the second image of a larger buffer
        full = ClArray.from_numpy(rt, np.concatenate([x[:1], x]).astype(dt))
        xs = full.slice([slice(1, n + 1)])
        assert xs.offset > 0
    else:
        xs = ClArray.from_numpy(rt, x.astype(dt))
    ws, gs = (ClArray.from_numpy(rt, a.astype(dt)) for a in (w, g))
    bs = ClArray.from_numpy(rt, bias.astype(dt)) if has_bias else None
    o = ConvOptions(stride, padding, dilation, 1)
    tol = 1e-5 if dt == "float32" else 1e-12
    scale = lambda a: tol * max(1.0, float(np.abs(a).max()))  # noqa: E731
    got = _down(backend, backend.conv2d(xs, ws, bs, o))
    np.testing.assert_allclose(got, want, rtol=tol, atol=scale(want))
    dx = _down(backend, backend.conv2d_x_backward(xs, ws, gs, o))
    np.testing.assert_allclose(dx, want_dx, rtol=tol, atol=scale(want_dx))
    dw1 = backend.conv2d_weight_backward(xs, ws, gs, o)
    np.testing.assert_allclose(_down(backend, dw1), want_dw, rtol=tol, atol=scale(want_dw))
    dw2 = backend.conv2d_weight_backward(xs, ws, gs, o)
    assert np.array_equal(_down(backend, dw1), _down(backend, dw2))  # fixed order: same bits
    for kernel in ("dconv_fwd", "dconv_dx", "dconv_dw"):
        assert any(key[0][0] == "dconv" and key[1] == kernel for key in rt._kernels), kernel


def test_a_cpu_device_keeps_im2col_unless_asked(monkeypatch):
    """Unset: a CPU device runs im2col (no direct program built for this shape); `0` too."""
    rng = np.random.default_rng(8)
    x = ClArray.from_numpy(RT, rng.standard_normal((1, 2, 6, 5)).astype(np.float32))
    w = ClArray.from_numpy(RT, rng.standard_normal((4, 2, 2, 2)).astype(np.float32))
    o = ConvOptions((1, 1), (0, 0), (1, 1), 1)
    for value in (None, "0"):
        if value is None:
            monkeypatch.delenv("BURN_GPU_CONV_DIRECT", raising=False)
        else:
            monkeypatch.setenv("BURN_GPU_CONV_DIRECT", value)
        got = _down(B, B.conv2d(x, w, None, o))
        want = ref.conv2d_passes(_down(B, x), _down(B, w), (1, 1), (0, 0), (1, 1), None)[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        assert not any(k[0][0] == "dconv" and k[0][2].co == 4 and k[0][2].ci == 2
                       for k in RT._kernels)  # fmt: skip
