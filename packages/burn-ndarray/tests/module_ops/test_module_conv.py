"""conv2d / conv_transpose2d and their gradients against float64 nested-loop references."""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import module
from burn_tensor.ops import ConvOptions, ConvTransposeOptions


def _dot(a, b) -> float:
    return float(np.sum(np.asarray(a, np.float64) * np.asarray(b, np.float64)))


def ref_conv2d(x, w, b, stride, pad, dil, groups):
    n, _, h, wd = x.shape
    co, cg, kh, kw = w.shape
    oh = (h + 2 * pad[0] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * pad[1] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    cog = co // groups
    out = np.zeros((n, co, oh, ow))
    for ni in range(n):
        for o in range(co):
            grp = o // cog
            for y in range(oh):
                for xx in range(ow):
                    acc = 0.0 if b is None else b[o]
                    for c in range(cg):
                        for i in range(kh):
                            for j in range(kw):
                                r = y * stride[0] + i * dil[0] - pad[0]
                                q = xx * stride[1] + j * dil[1] - pad[1]
                                if 0 <= r < h and 0 <= q < wd:
                                    acc += x[ni, grp * cg + c, r, q] * w[o, c, i, j]
                    out[ni, o, y, xx] = acc
    return out


def ref_conv_transpose2d(x, w, b, stride, pad, pad_out, dil, groups):
    n, cin, h, wd = x.shape
    _, cog, kh, kw = w.shape
    cig = cin // groups
    oh = (h - 1) * stride[0] - 2 * pad[0] + dil[0] * (kh - 1) + pad_out[0] + 1
    ow = (wd - 1) * stride[1] - 2 * pad[1] + dil[1] * (kw - 1) + pad_out[1] + 1
    out = np.zeros((n, cog * groups, oh, ow))
    for ni in range(n):
        for ci in range(cin):
            grp = ci // cig
            for r in range(h):
                for q in range(wd):
                    for c in range(cog):
                        for i in range(kh):
                            for j in range(kw):
                                y = r * stride[0] + i * dil[0] - pad[0]
                                xx = q * stride[1] + j * dil[1] - pad[1]
                                if 0 <= y < oh and 0 <= xx < ow:
                                    out[ni, grp * cog + c, y, xx] += (
                                        x[ni, ci, r, q] * w[ci, c, i, j]
                                    )
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


# (n, c_in, c_out, h, w, kernel, stride, padding, dilation, groups, bias)
CONV_CASES = [
    (2, 3, 4, 7, 6, (3, 3), (1, 1), (1, 1), (1, 1), 1, True),
    (1, 4, 6, 8, 7, (3, 2), (2, 1), (1, 2), (1, 2), 2, True),
    (2, 4, 4, 9, 9, (3, 3), (2, 2), (0, 1), (2, 2), 4, False),  # depthwise
    (1, 2, 3, 5, 5, (1, 1), (1, 1), (0, 0), (1, 1), 1, True),  # 1x1
    (1, 2, 2, 6, 8, (2, 4), (3, 2), (1, 2), (1, 1), 1, False),
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_matches_reference(env, rng, case):
    n, cin, cout, h, w, k, s, p, d, g, with_bias = case
    x = rng.standard_normal((n, cin, h, w))
    wt = rng.standard_normal((cout, cin // g, *k))
    b = rng.standard_normal(cout) if with_bias else None
    out = module.conv2d(
        env.t(x),
        env.t(wt),
        None if b is None else env.t(b),
        stride=list(s),
        padding=list(p),
        dilation=list(d),
        groups=g,
    )
    env.close(out, ref_conv2d(x, wt, b, s, p, d, g))


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_gradients_are_adjoints(env, rng, case):
    n, cin, cout, h, w, k, s, p, d, g, _ = case
    B = env.backend
    opts = ConvOptions(s, p, d, g)
    x = env.p(rng.standard_normal((n, cin, h, w)))
    wt = env.p(rng.standard_normal((cout, cin // g, *k)))
    y = B.conv2d(x, wt, None, opts)
    gy = env.p(rng.standard_normal(y.shape))
    dx = B.conv2d_x_backward(x, wt, gy, opts)
    dw = B.conv2d_weight_backward(x, wt, gy, opts)
    assert dx.shape == x.shape and dw.shape == wt.shape
    assert dx.dtype == env.dtype and dw.dtype == env.dtype
    lhs = _dot(y, gy)
    assert _dot(x, dx) == pytest.approx(lhs, rel=env.tol * 10, abs=env.tol * 10)
    assert _dot(wt, dw) == pytest.approx(lhs, rel=env.tol * 10, abs=env.tol * 10)


# (n, c_in, c_out, h, w, kernel, stride, padding, padding_out, dilation, groups, bias)
CONVT_CASES = [
    (2, 3, 4, 4, 5, (3, 3), (1, 1), (1, 1), (0, 0), (1, 1), 1, True),
    (1, 4, 6, 3, 4, (3, 2), (2, 3), (1, 0), (1, 2), (1, 2), 2, True),
    (1, 2, 2, 3, 3, (3, 3), (1, 1), (1, 1), (1, 1), (2, 2), 1, False),  # padding_out >= stride
    (2, 4, 4, 3, 3, (2, 2), (2, 2), (0, 0), (0, 0), (1, 1), 4, True),
    (1, 2, 3, 2, 3, (1, 1), (1, 1), (0, 0), (0, 0), (1, 1), 1, False),
]


@pytest.mark.parametrize("case", CONVT_CASES)
def test_conv_transpose2d_matches_reference(env, rng, case):
    n, cin, cout, h, w, k, s, p, po, d, g, with_bias = case
    x = rng.standard_normal((n, cin, h, w))
    wt = rng.standard_normal((cin, cout // g, *k))
    b = rng.standard_normal(cout) if with_bias else None
    out = module.conv_transpose2d(
        env.t(x),
        env.t(wt),
        None if b is None else env.t(b),
        stride=list(s),
        padding=list(p),
        padding_out=list(po),
        dilation=list(d),
        groups=g,
    )
    env.close(out, ref_conv_transpose2d(x, wt, b, s, p, po, d, g))


@pytest.mark.parametrize("case", CONVT_CASES)
def test_conv_transpose2d_gradients_are_adjoints(env, rng, case):
    n, cin, cout, h, w, k, s, p, po, d, g, _ = case
    B = env.backend
    opts = ConvTransposeOptions(s, p, po, d, g)
    x = env.p(rng.standard_normal((n, cin, h, w)))
    wt = env.p(rng.standard_normal((cin, cout // g, *k)))
    y = B.conv_transpose2d(x, wt, None, opts)
    gy = env.p(rng.standard_normal(y.shape))
    dx = B.conv_transpose2d_x_backward(wt, gy, opts)
    dw = B.conv_transpose2d_weight_backward(x, wt, gy, opts)
    assert dx.shape == x.shape and dw.shape == wt.shape
    lhs = _dot(y, gy)
    assert _dot(x, dx) == pytest.approx(lhs, rel=env.tol * 10, abs=env.tol * 10)
    assert _dot(wt, dw) == pytest.approx(lhs, rel=env.tol * 10, abs=env.tol * 10)


def test_conv_bias_backward_sums_over_batch_and_space(env, rng):
    g = rng.standard_normal((2, 3, 4, 5))
    b = env.p(np.zeros(3))
    got = env.backend.conv2d_bias_backward(None, None, b, env.p(g))
    env.close(got, g.sum(axis=(0, 2, 3)))


def test_conv2d_does_not_write_inputs(env, rng):
    x = env.p(rng.standard_normal((2, 2, 5, 5)))
    w = env.p(rng.standard_normal((3, 2, 3, 3)))
    x0, w0 = x.copy(), w.copy()
    env.backend.conv2d(x, w, None, ConvOptions((1, 1), (1, 1), (1, 1), 1))
    env.backend.conv_transpose2d(
        x, w.transpose(1, 0, 2, 3), None, ConvTransposeOptions((2, 2), (1, 1), (1, 1), (1, 1), 1)
    )
    assert np.array_equal(x, x0) and np.array_equal(w, w0)


def _arange(shape):
    return np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)


def _burn_convt(env, cin, cout, k, s, p, po, d, g, hw):
    """Burn's ConvTranspose2dTestCase: arange input, weights and bias."""
    x, w, b = _arange((1, cin, *hw)), _arange((cin, cout // g, *k)), _arange((cout,))
    return module.conv_transpose2d(
        env.t(x), env.t(w), env.t(b), stride=s, padding=p, padding_out=po, dilation=d, groups=g
    )


def test_conv_transpose2d_burn_literals(env):
    # crates/burn-tensor/src/tests/module/conv_transpose2d.rs
    env.close(
        _burn_convt(env, 1, 1, (3, 3), 1, 1, 0, 1, 1, (2, 2)), [[[[5.0, 11.0], [23.0, 29.0]]]]
    )
    env.close(
        _burn_convt(env, 1, 1, (2, 2), 2, 0, 0, 1, 1, (2, 2)),
        [[[[0, 0, 0, 1], [0, 0, 2, 3], [0, 2, 0, 3], [4, 6, 6, 9]]]],
    )
    env.close(
        _burn_convt(env, 2, 2, (3, 3), 1, 1, 0, 1, 2, (2, 2)),
        [[[[5, 11], [23, 29]], [[236, 258], [302, 324]]]],
    )
    env.close(
        _burn_convt(env, 2, 2, (3, 3), 1, 1, 1, 2, 1, (2, 2)),
        [
            [
                [
                    [126, 116, 136, 124, 146],
                    [108, 88, 114, 92, 120],
                    [156, 140, 166, 148, 176],
                    [126, 100, 132, 104, 138],
                    [186, 164, 196, 172, 206],
                ],
                [
                    [217, 189, 227, 197, 237],
                    [163, 125, 169, 129, 175],
                    [247, 213, 257, 221, 267],
                    [181, 137, 187, 141, 193],
                    [277, 237, 287, 245, 297],
                ],
            ]
        ],
    )


def test_conv2d_burn_literal(env):
    # Hand-derived: 1x1x4x4 arange input, 3x3 ones kernel, padding 1 -> 3x3 neighbourhood sums.
    x = _arange((1, 1, 4, 4))
    out = module.conv2d(env.t(x), env.t(np.ones((1, 1, 3, 3))), None, padding=1)
    env.close(out, [[[[10, 18, 24, 18], [27, 45, 54, 39], [51, 81, 90, 63], [42, 66, 72, 50]]]])


@pytest.mark.parametrize("g", [1, 2])
def test_batch_chunks_with_reused_buffers(env, rng, monkeypatch, g):
    """Chunks of 2 images over a batch of 3: buffers are refilled and the last chunk is short."""
    from burn_ndarray import _conv, _conv_transpose

    monkeypatch.setattr(_conv, "chunk_size", lambda n, per_image: min(n, 2))
    monkeypatch.setattr(_conv_transpose, "chunk_size", lambda n, per_image: min(n, 2))
    x = rng.standard_normal((3, 4, 6, 5))
    w = rng.standard_normal((6, 4 // g, 3, 2))
    b = rng.standard_normal(6)
    s, p, d = (2, 1), (1, 1), (1, 2)
    out = module.conv2d(env.t(x), env.t(w), env.t(b), stride=s, padding=p, dilation=d, groups=g)
    env.close(out, ref_conv2d(x, w, b, s, p, d, g))
    gy = rng.standard_normal(out.shape)
    dw = env.backend.conv2d_weight_backward(env.p(x), env.p(w), env.p(gy), ConvOptions(s, p, d, g))
    lhs = _dot(ref_conv2d(x, w, None, s, p, d, g), gy)
    assert _dot(w, dw) == pytest.approx(lhs, rel=env.tol * 10, abs=env.tol * 10)
    wt = rng.standard_normal((4, 6 // g, 3, 2))
    out_t = module.conv_transpose2d(env.t(x), env.t(wt), env.t(b), stride=s, padding=p, groups=g)
    env.close(out_t, ref_conv_transpose2d(x, wt, b, s, p, (0, 0), (1, 1), g))
