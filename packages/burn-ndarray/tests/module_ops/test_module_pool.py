"""avg / max / adaptive pooling and their gradients against float64 nested-loop references."""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import module


def _dot(a, b) -> float:
    return float(np.sum(np.asarray(a, np.float64) * np.asarray(b, np.float64)))


def ref_avg_pool2d(x, k, s, p, count_include_pad):
    n, c, h, w = x.shape
    oh, ow = (h + 2 * p[0] - k[0]) // s[0] + 1, (w + 2 * p[1] - k[1]) // s[1] + 1
    out = np.zeros((n, c, oh, ow))
    for y in range(oh):
        for xx in range(ow):
            total, count = np.zeros((n, c)), 0
            for i in range(k[0]):
                for j in range(k[1]):
                    r, q = y * s[0] + i - p[0], xx * s[1] + j - p[1]
                    if 0 <= r < h and 0 <= q < w:
                        total += x[:, :, r, q]
                        count += 1
            out[:, :, y, xx] = total / (k[0] * k[1] if count_include_pad else count)
    return out


def ref_max_pool2d(x, k, s, p, d):
    n, c, h, w = x.shape
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    out = np.full((n, c, oh, ow), -np.inf)
    idx = np.zeros((n, c, oh, ow), np.int64)
    for b in range(n):
        for ch in range(c):
            for y in range(oh):
                for xx in range(ow):
                    for i in range(k[0]):
                        for j in range(k[1]):
                            r, q = y * s[0] + i * d[0] - p[0], xx * s[1] + j * d[1] - p[1]
                            if 0 <= r < h and 0 <= q < w and x[b, ch, r, q] > out[b, ch, y, xx]:
                                out[b, ch, y, xx] = x[b, ch, r, q]
                                idx[b, ch, y, xx] = r * w + q
    return out, idx


def ref_adaptive_avg_pool2d(x, out_hw):
    n, c, h, w = x.shape
    out = np.zeros((n, c, *out_hw))
    for y in range(out_hw[0]):
        r0, r1 = (y * h) // out_hw[0], -(-((y + 1) * h) // out_hw[0])
        for xx in range(out_hw[1]):
            q0, q1 = (xx * w) // out_hw[1], -(-((xx + 1) * w) // out_hw[1])
            out[:, :, y, xx] = x[:, :, r0:r1, q0:q1].mean(axis=(2, 3))
    return out


# (shape, kernel, stride, padding)
AVG_CASES = [
    ((2, 3, 6, 7), (2, 2), (2, 2), (0, 0)),
    ((1, 2, 7, 6), (3, 2), (2, 1), (1, 1)),
    ((2, 1, 5, 8), (3, 4), (1, 2), (1, 2)),
]


@pytest.mark.parametrize("case", AVG_CASES)
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool2d_matches_reference(env, rng, case, count_include_pad):
    shape, k, s, p = case
    x = rng.standard_normal(shape)
    out = module.avg_pool2d(env.t(x), list(k), list(s), list(p), count_include_pad)
    env.close(out, ref_avg_pool2d(x, k, s, p, count_include_pad))


@pytest.mark.parametrize("case", AVG_CASES)
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool2d_backward_is_adjoint(env, rng, case, count_include_pad):
    shape, k, s, p = case
    x = env.p(rng.standard_normal(shape))
    y = env.backend.avg_pool2d(x, k, s, p, count_include_pad)
    g = env.p(rng.standard_normal(y.shape))
    dx = env.backend.avg_pool2d_backward(x, g, k, s, p, count_include_pad)
    assert dx.shape == x.shape and dx.dtype == env.dtype
    assert _dot(x, dx) == pytest.approx(_dot(y, g), rel=env.tol * 10, abs=env.tol * 10)


# (shape, kernel, stride, padding, dilation)
MAX_CASES = [
    ((2, 3, 6, 7), (2, 2), (2, 2), (0, 0), (1, 1)),
    ((1, 2, 7, 6), (3, 2), (2, 1), (1, 1), (2, 1)),
    ((2, 1, 5, 8), (3, 3), (1, 1), (1, 1), (1, 1)),
    ((1, 2, 9, 9), (2, 3), (3, 2), (1, 1), (2, 3)),
]


@pytest.mark.parametrize("case", MAX_CASES)
def test_max_pool2d_with_indices_matches_reference(env, rng, case):
    shape, k, s, p, d = case
    x = rng.standard_normal(shape)
    out, idx = module.max_pool2d_with_indices(env.t(x), list(k), list(s), list(p), list(d))
    ref_out, ref_idx = ref_max_pool2d(x, k, s, p, d)
    env.close(out, ref_out)
    assert idx.numpy().dtype == env.backend.int_dtype.np
    np.testing.assert_array_equal(idx.numpy(), ref_idx)
    env.close(module.max_pool2d(env.t(x), list(k), list(s), list(p), list(d)), ref_out)


@pytest.mark.parametrize("case", MAX_CASES)
def test_max_pool2d_backward_matches_finite_differences(rng, case):
    from burn_ndarray import NdArray

    shape, k, s, p, d = case
    B = NdArray(float_dtype="float64")
    x = rng.standard_normal(shape)
    out, idx = B.max_pool2d_with_indices(x, k, s, p, d)
    g = rng.standard_normal(out.shape)
    dx = B.max_pool2d_with_indices_backward(x, k, s, p, d, g, idx)
    # Central differences of L(x) = <maxpool(x), g>; exact for a piecewise-linear L away from ties.
    eps = 1e-6
    num = np.zeros_like(x)
    for pos in np.ndindex(*shape):
        e = np.zeros_like(x)
        e[pos] = eps
        num[pos] = (
            _dot(B.max_pool2d(x + e, k, s, p, d), g) - _dot(B.max_pool2d(x - e, k, s, p, d), g)
        ) / (2 * eps)
    np.testing.assert_allclose(dx, num, atol=1e-6)


def test_max_pool2d_ties_keep_first_and_nan_wins(env):
    x = np.array([[[[1.0, 1.0, 0.0], [1.0, np.nan, 2.0], [0.0, 2.0, 2.0]]]])
    out, idx = module.max_pool2d_with_indices(env.t(x), 2, 1)
    assert np.isnan(out.numpy()).all()
    np.testing.assert_array_equal(idx.numpy(), [[[[4, 4], [4, 4]]]])
    x = np.array([[[[1.0, 1.0, 0.0], [1.0, 0.0, 2.0], [0.0, 2.0, 2.0]]]])
    out, idx = module.max_pool2d_with_indices(env.t(x), 2, 1)
    env.close(out, [[[[1, 2], [2, 2]]]])
    np.testing.assert_array_equal(idx.numpy(), [[[[0, 5], [7, 5]]]])


def test_max_pool2d_burn_literal(env):
    # crates/burn-tensor/src/tests/module/maxpool2d.rs: test_max_pool2d_complex
    x = [
        [
            [
                [0.5388, 0.0676, 0.7122, 0.8316, 0.0653],
                [0.9154, 0.1536, 0.9089, 0.8016, 0.7518],
                [0.2073, 0.0501, 0.8811, 0.5604, 0.5075],
                [0.4384, 0.9963, 0.9698, 0.4988, 0.2609],
                [0.3391, 0.2230, 0.4610, 0.5365, 0.6880],
            ]
        ]
    ]
    out, idx = module.max_pool2d_with_indices(env.t(x), [4, 2], [1, 2], [2, 1], [1, 1])
    env.close(
        out,
        [
            [
                [
                    [0.9154, 0.9089, 0.8316],
                    [0.9154, 0.9089, 0.8316],
                    [0.9154, 0.9963, 0.8316],
                    [0.9154, 0.9963, 0.8016],
                    [0.4384, 0.9963, 0.688],
                    [0.4384, 0.9963, 0.688],
                ]
            ]
        ],
    )
    np.testing.assert_array_equal(
        idx.numpy(), [[[[5, 7, 3], [5, 7, 3], [5, 16, 3], [5, 16, 8], [15, 16, 24], [15, 16, 24]]]]
    )


def test_avg_pool2d_burn_literals(env):
    # crates/burn-tensor/src/tests/module/avgpool2d.rs (arange input)
    x = env.t(np.arange(24.0).reshape(1, 1, 4, 6))
    env.close(
        module.avg_pool2d(x, [3, 4], [1, 2], [1, 2], True),
        [
            [
                [
                    [1.1666666666666667, 3, 4.333333333333333, 2.5],
                    [3.25, 7.5, 9.5, 5.25],
                    [6.25, 13.5, 15.5, 8.25],
                    [5.166666666666667, 11, 12.333333333333334, 6.5],
                ]
            ]
        ],
    )
    env.close(
        module.avg_pool2d(x, [3, 4], [1, 2], [1, 2], False),
        [
            [
                [
                    [3.5, 4.5, 6.5, 7.5],
                    [6.5, 7.5, 9.5, 10.5],
                    [12.5, 13.5, 15.5, 16.5],
                    [15.5, 16.5, 18.5, 19.5],
                ]
            ]
        ],
    )


@pytest.mark.parametrize("out_hw", [(3, 4), (5, 6), (7, 9), (1, 1), (2, 5)])
def test_adaptive_avg_pool2d_matches_reference_and_adjoint(env, rng, out_hw):
    x = rng.standard_normal((2, 3, 5, 6))
    out = module.adaptive_avg_pool2d(env.t(x), list(out_hw))
    env.close(out, ref_adaptive_avg_pool2d(x, out_hw))
    xp = env.p(x)
    g = env.p(rng.standard_normal((2, 3, *out_hw)))
    dx = env.backend.adaptive_avg_pool2d_backward(xp, g)
    assert dx.shape == x.shape and dx.dtype == env.dtype
    assert _dot(xp, dx) == pytest.approx(_dot(out.numpy(), g), rel=env.tol * 10, abs=env.tol * 10)
