"""NdArray's `conv2d_activation` (`_conv_act.py`, `_native/epilogue.h`): the activation applied
in the conv kernels' output blocks gives the same bits as conv2d followed by the activation op,
over every conv path (dense tasks with and without im2col, numpy's pointwise GEMM, depthwise
and grouped, the few-channel stem, Winograd, equal filters), strides, padding, groups, odd
shapes, float32/float64 and thread counts; both match numpy float64. The finding: mobilenet's
41 conv + activation pairs each re-read and wrote the conv's whole output in a second op."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray, _native
from burn_ndarray._native_ops import default_native_min
from burn_tensor import ConvOptions

needs_native = pytest.mark.skipif(_native.lib() is None, reason="no native kernels here")

ACTS = [("relu",), ("hard_swish",), ("hard_sigmoid", 1 / 6, 0.5), ("silu",), ("sigmoid",)]
# (x shape, weight shape, groups, stride, padding): the path each one takes on NdArray
CASES = [
    ((1, 16, 40, 40), (24, 16, 1, 1), 1, 1, 0),  # dense tasks, 1x1 (no im2col)
    ((2, 24, 27, 23), (40, 24, 3, 3), 1, 2, 1),  # dense tasks, im2col, strided, batch 2
    ((2, 24, 17, 13), (40, 24, 3, 3), 1, 1, 1),  # small: the numpy conv path
    ((1, 96, 7, 7), (40, 96, 1, 1), 1, 1, 0),  # numpy pointwise GEMM (small input)
    ((1, 40, 1, 1), (72, 40, 1, 1), 1, 1, 0),  # squeeze-excitation 1x1 on 1x1
    ((1, 72, 29, 31), (72, 1, 3, 3), 72, 2, 1),  # depthwise, stride 2, odd sizes
    ((1, 48, 14, 14), (48, 1, 5, 5), 48, 1, 2),  # depthwise 5x5
    ((2, 12, 19, 23), (24, 4, 3, 5), 3, 2, 2),  # grouped, 4 channels per group
    ((1, 3, 96, 97), (16, 3, 3, 3), 1, 2, 1),  # few-channel stem
    ((1, 64, 30, 30), (64, 64, 3, 3), 1, 1, 1),  # Winograd
]


def _conv64(x, w, b, groups, stride, pad):
    """conv2d in float64 (numpy only)."""
    x64 = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    co, cg, kh, kw = w.shape
    win = np.lib.stride_tricks.sliding_window_view(x64, (kh, kw), axis=(2, 3))
    win = win[:, :, ::stride, ::stride]  # [n, c, oh, ow, kh, kw]
    n, _, oh, ow = win.shape[:4]
    win = win.reshape(n, groups, cg, oh, ow, kh, kw)
    wg = w.astype(np.float64).reshape(groups, co // groups, cg, kh, kw)
    return np.einsum("ngchwij,gocij->ngohw", win, wg).reshape(n, co, oh, ow) + b[:, None, None]


def _act64(out, act):
    """The activation in float64."""
    name = act[0]
    if name == "relu":
        return np.maximum(out, 0)
    if name == "silu":
        return out / (1 + np.exp(-out))
    if name == "sigmoid":
        return 1 / (1 + np.exp(-out))
    alpha, beta = act[1:] if name == "hard_sigmoid" else (1 / 6, 0.5)
    hs = np.clip(out * alpha + beta, 0, 1)
    return hs if name == "hard_sigmoid" else out * hs


def _operands(case, dtype, seed=0):
    xs, ws, g, s, p = case
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(xs) * 2).astype(dtype)
    w = (rng.standard_normal(ws) / np.sqrt(np.prod(ws[1:]))).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype)
    return x, w, b, ConvOptions((s, s), (p, p), (1, 1), g)


@needs_native
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-g{c[2]}s{c[3]}p{c[4]}")
def test_fused_equals_unfused_and_numpy(case, dtype):
    nd = NdArray(float_dtype=np.dtype(dtype).name, num_threads=1)
    x, w, b, opts = _operands(case, dtype)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    conv64 = _conv64(x, w, b, case[2], case[3], case[4])
    for act in ACTS:
        fused = nd.conv2d_activation(x, w, b, opts, act)
        unfused = getattr(nd, act[0])(nd.conv2d(x, w, b, opts), *act[1:])
        assert fused.shape == unfused.shape and fused.dtype == dtype
        assert fused.tobytes() == unfused.tobytes(), act
        want = _act64(conv64, act)
        err = np.abs(fused - want).max() / max(np.abs(want).max(), 1.0)
        assert err < tol, (act, err)


@needs_native
def test_fused_paths_run_no_second_activation_op():
    """The kernels' epilogue applies the activation: the backend's activation op is never
    called for the dense, pointwise, depthwise, grouped and stem paths (before: one more op
    per conv), except sigmoid and silu on outputs under native_min elements (there the op runs
    numpy's exp, with other bits); Winograd still calls it."""
    nd = NdArray(num_threads=1)  # interned: the spies are taken off again below
    m = default_native_min()
    names = ("relu", "hard_swish", "hard_sigmoid", "silu", "sigmoid")
    ops = {name: getattr(nd, name) for name in names}
    calls, unfused = [], 0
    try:
        for name, op in ops.items():
            spy = lambda *a, _op=op, _n=name: calls.append(_n) or _op(*a)  # noqa: E731
            object.__setattr__(nd, name, spy)
        for case in (CASES[0], CASES[1], CASES[3], CASES[4], CASES[5], CASES[7], CASES[8]):
            x, w, b, opts = _operands(case, np.float32)
            for act in ACTS:
                calls.clear()
                out = nd.conv2d_activation(x, w, b, opts, act)
                if act[0] in ("silu", "sigmoid") and out.size < m:
                    assert calls[:1] == [act[0]], (case, act)
                    unfused += 1
                else:
                    assert calls == [], (case, act)
        assert unfused < 10
        calls.clear()
        x, w, b, opts = _operands(CASES[9], np.float32)  # Winograd has no epilogue
        nd.conv2d_activation(x, w, b, opts, ("relu",))
        assert calls == ["relu"]
    finally:
        for name, op in ops.items():
            object.__setattr__(nd, name, op)


@needs_native
def test_bitwise_identical_for_1_and_2_threads():
    outs = []
    for t in (1, 2):
        nd = NdArray(num_threads=t)
        row = []
        for case in (CASES[1], CASES[5], CASES[7]):
            x, w, b, opts = _operands(case, np.float32, seed=3)
            row.append(nd.conv2d_activation(x, w, b, opts, ("hard_swish",)))
        outs.append(row)
    for a, c in zip(*outs):
        assert a.tobytes() == c.tobytes()


@needs_native
def test_nan_and_equal_filters():
    """NaN stays NaN through every activation (as the ops); equal filters give equal channels
    (the `_filter_classes` path of the dense conv, fused per distinct filter)."""
    nd = NdArray(num_threads=1)
    x, w, b, opts = _operands(CASES[1], np.float32)
    x[0, 0, 5, 5] = np.nan
    w[3] = w[1]
    b[3] = b[1]
    for act in ACTS:
        fused = nd.conv2d_activation(x, w, b, opts, act)
        unfused = getattr(nd, act[0])(nd.conv2d(x, w, b, opts), *act[1:])
        assert np.isnan(fused).any()
        np.testing.assert_array_equal(fused, unfused)
        np.testing.assert_array_equal(fused[:, 3], fused[:, 1])
