"""Grouped conv2d forward on the native kernels (`_native_dwconv`, `_native/dwconv.c`) against
float64 numpy references: depthwise with channel multipliers, other groupings, strides 1-3,
paddings, dilations, odd sizes, rows wider than one register tile, planes split into several
strips, float32/float64, bitwise-identical results for 1-4 threads, equal filters giving equal
channels, the one-call native path, clear errors, and the (numpy) gradients of groups > 1."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray, _native, _native_dwconv
from burn_tensor.ops import ConvOptions

pytestmark = pytest.mark.skipif(_native.lib() is None, reason="no native kernels (no compiler)")
RNG = np.random.default_rng(11)


def ref_conv(x, w, bias, s, p, d, groups) -> np.ndarray:
    """float64 direct grouped convolution, window by window."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c, h, wd = x.shape
    co, cig, kh, kw = w.shape
    oh = (h + 2 * p[0] - d[0] * (kh - 1) - 1) // s[0] + 1
    ow = (wd + 2 * p[1] - d[1] * (kw - 1) - 1) // s[1] + 1
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    out = np.zeros((n, co, oh, ow))
    cog = co // groups
    for oc in range(co):
        g = oc // cog
        for i in range(kh):
            for j in range(kw):
                win = xp[:, g * cig : (g + 1) * cig,
                         i * d[0] : i * d[0] + s[0] * (oh - 1) + 1 : s[0],
                         j * d[1] : j * d[1] + s[1] * (ow - 1) + 1 : s[1]]  # fmt: skip
                out[:, oc] += np.einsum("ncyx,c->nyx", win, w[oc, :, i, j])
    if bias is not None:
        out += bias.astype(np.float64)[None, :, None, None]
    return out


# (x shape, weight shape, stride, padding, dilation, groups)
CASES = [
    ((2, 8, 13, 11), (8, 1, 3, 3), (1, 1), (1, 1), (1, 1), 8),  # mobilenet's 3x3 depthwise
    ((1, 6, 15, 14), (6, 1, 5, 5), (2, 2), (2, 2), (1, 1), 6),  # efficientnet's 5x5 stride 2
    ((2, 4, 9, 10), (12, 1, 3, 2), (1, 2), (0, 1), (2, 1), 4),  # multiplier 3, dilation, odd
    ((1, 3, 4, 4), (3, 1, 5, 5), (1, 1), (3, 3), (1, 1), 3),  # kernel larger than the input
    ((2, 6, 10, 10), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1), 2),  # grouped, 3 channels per group
    ((1, 12, 7, 9), (8, 3, 1, 1), (2, 1), (0, 0), (1, 1), 4),  # grouped 1x1, stride 2
    ((1, 16, 15, 13), (16, 8, 3, 3), (2, 2), (1, 1), (1, 1), 2),  # regnet-like, odd, stride 2
    ((3, 5, 11, 17), (10, 1, 3, 5), (3, 3), (2, 1), (1, 2), 5),  # stride 3, multiplier 2
    ((1, 4, 9, 23), (4, 1, 3, 3), (2, 2), (3, 0), (2, 3), 4),  # stride 2, odd pad, dilation
    ((1, 2, 5, 150), (2, 1, 3, 3), (1, 1), (1, 1), (1, 1), 2),  # a row of several tiles
    ((1, 3, 6, 1), (3, 1, 3, 1), (1, 1), (1, 0), (1, 1), 3),  # one output column
]
# Planes split into several strips of output rows (each task's buffer holds at most 128 KB).
BIG = [
    ((1, 2, 70, 600), (2, 1, 3, 3), (1, 1), (1, 1), (1, 1), 2),
    ((1, 16, 40, 200), (16, 8, 3, 3), (2, 2), (1, 1), (1, 1), 2),
]
TOL = {np.float32: 3e-6, np.float64: 1e-13}


def backend(dtype, threads):
    kw = {"float_dtype": "float64", "int_dtype": "int64"} if dtype == np.float64 else {}
    return NdArray(num_threads=threads, parallel_min=1, **kw)


def operands(case, dtype):
    xs, ws = case[:2]
    x = RNG.uniform(-1, 1, xs).astype(dtype)
    w = RNG.uniform(-1, 1, ws).astype(dtype)
    return x, w, RNG.uniform(-1, 1, ws[0]).astype(dtype)


def out_hw(case):
    (_, _, h, w), (_, _, kh, kw), s, p, d, _ = case
    return ((h + 2 * p[0] - d[0] * (kh - 1) - 1) // s[0] + 1,
            (w + 2 * p[1] - d[1] * (kw - 1) - 1) // s[1] + 1)  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES + BIG)
def test_matches_float64_reference(case, dtype):
    _, ws, s, p, d, g = case
    x, w, bias = operands(case, dtype)
    want = ref_conv(x, w, bias, s, p, d, g)
    got = backend(dtype, 2).conv2d(x, w, bias, ConvOptions(s, p, d, g))
    assert got.dtype == dtype and got.shape == want.shape
    taps = ws[1] * ws[2] * ws[3]
    np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype] * taps * 3)
    got = backend(dtype, 1).conv2d(x, w, None, ConvOptions(s, p, d, g))
    want = ref_conv(x, w, None, s, p, d, g)
    np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype] * taps * 3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES[:3] + CASES[6:9] + BIG[:1])
def test_bitwise_the_same_for_every_thread_count(case, dtype):
    """The kernel itself on 1-4 OpenMP threads (the op would give small convs one thread)."""
    _, _, s, p, d, g = case
    x, w, bias = operands(case, dtype)
    lib = _native.lib()
    first = _native_dwconv._call(lib, 1, x, w, bias, g, s, p, d, out_hw(case))
    for nt in (2, 3, 4):
        got = _native_dwconv._call(lib, nt, x, w, bias, g, s, p, d, out_hw(case))
        np.testing.assert_array_equal(got, first)


def test_equal_filters_of_a_group_give_equal_channels():
    """As in the groups-1 conv (`_filter_classes`): channels of one group with bitwise equal
    filters and biases are bitwise equal."""
    x = RNG.uniform(-1, 1, (1, 16, 9, 30)).astype(np.float32)
    w = np.repeat(RNG.uniform(-1, 1, (4, 8, 3, 3)).astype(np.float32), 2, axis=0)  # 8 x [8, 3, 3]
    bias = np.repeat(RNG.uniform(-1, 1, 4).astype(np.float32), 2)
    out = backend(np.float32, 2).conv2d(x, w, bias, ConvOptions((1, 1), (1, 1), (1, 1), 2))
    np.testing.assert_array_equal(out[:, 0::2], out[:, 1::2])


@pytest.mark.parametrize("ws, groups", [((16, 1, 3, 3), 16), ((16, 4, 3, 3), 4)])
def test_grouped_runs_as_one_native_call(monkeypatch, ws, groups):
    """Depthwise and other groupings reach dwconv.c once (no per-group conv, no numpy path)."""
    calls = []
    real = _native_dwconv._run
    monkeypatch.setattr(_native_dwconv, "_run", lambda *a: calls.append(1) or real(*a))
    b = backend(np.float32, 2)
    monkeypatch.setattr(type(b), "conv2d", lambda *a: pytest.fail("numpy conv path ran"))
    x = RNG.uniform(-1, 1, (1, 16, 20, 20)).astype(np.float32)
    w = RNG.uniform(-1, 1, ws).astype(np.float32)
    b.conv2d(x, w, None, ConvOptions((1, 1), (1, 1), (1, 1), groups))
    assert calls == [1]


def test_channel_mismatch_is_a_clear_error():
    b = backend(np.float32, 2)
    x = np.zeros((1, 6, 5, 5), np.float32)
    w = np.zeros((6, 1, 3, 3), np.float32)
    with pytest.raises(ValueError, match="groups"):
        b.conv2d(x, w, None, ConvOptions((1, 1), (1, 1), (1, 1), 3))


def test_out_channels_not_a_multiple_of_groups_is_a_clear_error():
    """Was numpy's "cannot reshape array of size 90 into shape (3,1,2,3,3)"."""
    b = backend(np.float32, 2)
    x = np.zeros((1, 6, 5, 5), np.float32)
    w = np.zeros((5, 2, 3, 3), np.float32)
    with pytest.raises(ValueError, match=r"5 output channels, not a multiple of groups 3"):
        b.conv2d(x, w, None, ConvOptions((1, 1), (1, 1), (1, 1), 3))


@pytest.mark.parametrize("shape", [(3,), (16,), (8, 1)])
def test_bias_not_out_channels_is_a_clear_error(shape):
    """A 3-element bias was read past its end (garbage such as 1.2e29 in channel 6)."""
    b = backend(np.float32, 1)
    x = np.ones((1, 8, 4, 4), np.float32)
    w = np.ones((8, 1, 3, 3), np.float32)
    with pytest.raises(ValueError, match=r"bias \[.*\] is not \[out channels 8\]"):
        b.conv2d(x, w, np.ones(shape, np.float32), ConvOptions((1, 1), (1, 1), (1, 1), 8))


def test_repeated_shapes_keep_their_checks():
    """The per-shape plan is remembered, the bias check is not skipped on a later call."""
    b = backend(np.float32, 1)
    x, w = np.ones((1, 8, 4, 4), np.float32), np.ones((8, 1, 3, 3), np.float32)
    opt = ConvOptions((1, 1), (1, 1), (1, 1), 8)
    for _ in range(2):
        assert b.conv2d(x, w, np.ones(8, np.float32), opt).shape == (1, 8, 4, 4)
        with pytest.raises(ValueError, match="bias"):
            b.conv2d(x, w, np.ones(3, np.float32), opt)
    opt_lists = ConvOptions([1, 1], [1, 1], [1, 1], 8)  # unhashable options still work
    np.testing.assert_array_equal(b.conv2d(x, w, None, opt_lists), b.conv2d(x, w, None, opt))


@pytest.mark.parametrize("case", [CASES[0], CASES[2], CASES[4], CASES[6], CASES[7], CASES[8]])
def test_gradients_of_groups_above_one(case):
    """dx and dw through the linearity of the conv, float64: for any v, u,
    <dx, v> = sum(g * conv(v, w)) and <dw, u> = sum(g * conv(x, u)). dx runs as the grouped
    conv of the upsampled gradient, dw of depthwise convs as grouped convs over the batch
    (`_native_dwconv_grad`), dw of other groupings on the numpy path."""
    _, _, s, p, d, groups = case
    x, w, _ = operands(case, np.float64)
    b, opt = backend(np.float64, 2), ConvOptions(s, p, d, groups)
    g = RNG.uniform(-1, 1, (x.shape[0], w.shape[0], *out_hw(case)))
    v, u = RNG.uniform(-1, 1, x.shape), RNG.uniform(-1, 1, w.shape)
    dx, dw = b.conv2d_x_backward(x, w, g, opt), b.conv2d_weight_backward(x, w, g, opt)
    assert dx.shape == x.shape and dw.shape == w.shape
    np.testing.assert_allclose(np.sum(dx * v), np.sum(g * ref_conv(v, w, None, s, p, d, groups)))
    np.testing.assert_allclose(np.sum(dw * u), np.sum(g * ref_conv(x, u, None, s, p, d, groups)))


def ref_weight_grad(x, g, kernel, s, p, d, groups) -> np.ndarray:
    """float64 dw [co, c / groups, kh, kw] window by window."""
    x, g = x.astype(np.float64), g.astype(np.float64)
    co, (oh, ow) = g.shape[1], g.shape[2:]
    cig = x.shape[1] // groups
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    dw = np.zeros((co, cig, *kernel))
    for o in range(co):
        grp = o // (co // groups)
        for i in range(kernel[0]):
            for j in range(kernel[1]):
                win = xp[:, grp * cig : (grp + 1) * cig,
                         i * d[0] : i * d[0] + s[0] * (oh - 1) + 1 : s[0],
                         j * d[1] : j * d[1] + s[1] * (ow - 1) + 1 : s[1]]  # fmt: skip
                dw[o, :, i, j] = np.einsum("ncyx,nyx->c", win, g[:, o])
    return dw


@pytest.mark.parametrize("case", [CASES[1], CASES[2], CASES[7], CASES[8], BIG[0]])
def test_depthwise_gradients_float32_and_thread_counts(case):
    """float32 dx and dw against float64 references, and bitwise the same on 1 and 3 threads
    (the kernel called directly: the op would give small convs one thread)."""
    import functools

    from burn_ndarray import _native_dwconv_grad as grad

    _, (co, _, kh, kw), s, p, d, groups = case
    x, w, _ = operands(case, np.float32)
    g = RNG.uniform(-1, 1, (x.shape[0], co, *out_hw(case))).astype(np.float32)
    opt = ConvOptions(s, p, d, groups)
    b = backend(np.float32, 2)
    dx, dw = b.conv2d_x_backward(x, w, g, opt), b.conv2d_weight_backward(x, w, g, opt)
    want_dw = ref_weight_grad(x, g, (kh, kw), s, p, d, groups)
    v = RNG.uniform(-1, 1, x.shape)
    np.testing.assert_allclose(np.sum(dx * v), np.sum(g * ref_conv(v, w, None, s, p, d, groups)),
                               rtol=1e-5)  # fmt: skip
    np.testing.assert_allclose(dw, want_dw, rtol=1e-5, atol=1e-5 * np.abs(want_dw).max())
    lib = _native.lib()
    runs = []
    for nt in (1, 3):
        fwd = functools.partial(_native_dwconv._conv, lib, nt, nt=nt)
        runs.append((grad.x_grad(fwd, x.shape, w, g, groups, s, p, d),
                     grad.weight_grad(fwd, x, g, (kh, kw), groups, s, p, d)))  # fmt: skip
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    np.testing.assert_array_equal(runs[0][0], dx)


def test_groups_one_goes_straight_to_the_native_conv(monkeypatch):
    """A groups-1 conv skips this op's plan (its second lookup cost ~1 us a call) and still
    gets the same clear errors, from the native groups-1 conv's own checks."""
    seen = []
    real = _native_dwconv._covered

    def counted(*args):
        seen.append(args[3].groups)
        return real(*args)

    monkeypatch.setattr(_native_dwconv, "_covered", counted)
    b = NdArray(num_threads=1, parallel_min=1)
    x = RNG.uniform(-1, 1, (1, 6, 9, 9)).astype(np.float32)
    w = RNG.uniform(-1, 1, (4, 6, 3, 3)).astype(np.float32)
    bias = RNG.uniform(-1, 1, 4).astype(np.float32)
    opt = ConvOptions((1, 1), (1, 1), (1, 1), 1)
    got = b.conv2d(x, w, bias, opt)
    np.testing.assert_allclose(got, ref_conv(x, w, bias, (1, 1), (1, 1), (1, 1), 1), atol=1e-4)
    assert 1 not in seen
    with pytest.raises(ValueError, match=r"bias \[3\] is not \[out channels 4\]"):
        b.conv2d(x, w, bias[:3], opt)
    with pytest.raises(ValueError, match="channels"):
        b.conv2d(x[:, :5], w, bias, opt)
    b.conv2d(x, w.reshape(4, 3, 6, 3)[:, :, :3], bias, ConvOptions((1, 1), (1, 1), (1, 1), 2))
    assert 2 in seen  # grouped convs still plan here
