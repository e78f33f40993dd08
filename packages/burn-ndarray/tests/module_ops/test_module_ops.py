"""1-D module ops (through the base-class defaults onto the 2-D kernels), unfold4d, embedding."""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import module
from burn_tensor.ops import UnfoldOptions


def ref_conv1d(x, w, b, s, p, d, g):
    n, _, length = x.shape
    co, cg, k = w.shape
    lo = (length + 2 * p - d * (k - 1) - 1) // s + 1
    out = np.zeros((n, co, lo))
    for o in range(co):
        grp = o // (co // g)
        for t in range(lo):
            acc = np.zeros(n) if b is None else np.full(n, b[o])
            for c in range(cg):
                for i in range(k):
                    src = t * s + i * d - p
                    if 0 <= src < length:
                        acc = acc + x[:, grp * cg + c, src] * w[o, c, i]
            out[:, o, t] = acc
    return out


def ref_conv_transpose1d(x, w, b, s, p, po, d, g):
    n, cin, length = x.shape
    _, cog, k = w.shape
    lo = (length - 1) * s - 2 * p + d * (k - 1) + po + 1
    out = np.zeros((n, cog * g, lo))
    for ci in range(cin):
        grp = ci // (cin // g)
        for t in range(length):
            for c in range(cog):
                for i in range(k):
                    dst = t * s + i * d - p
                    if 0 <= dst < lo:
                        out[:, grp * cog + c, dst] += x[:, ci, t] * w[ci, c, i]
    return out + (0 if b is None else b.reshape(1, -1, 1))


def test_conv1d(env, rng):
    x = rng.standard_normal((2, 4, 11))
    w = rng.standard_normal((6, 2, 3))
    b = rng.standard_normal(6)
    out = module.conv1d(env.t(x), env.t(w), env.t(b), stride=2, padding=1, dilation=2, groups=2)
    env.close(out, ref_conv1d(x, w, b, 2, 1, 2, 2))


def test_conv_transpose1d(env, rng):
    x = rng.standard_normal((2, 4, 5))
    w = rng.standard_normal((4, 3, 3))
    b = rng.standard_normal(6)
    out = module.conv_transpose1d(
        env.t(x), env.t(w), env.t(b), stride=2, padding=1, padding_out=1, dilation=1, groups=2
    )
    env.close(out, ref_conv_transpose1d(x, w, b, 2, 1, 1, 1, 2))


@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool1d(env, rng, count_include_pad):
    x = rng.standard_normal((2, 3, 9))
    out = module.avg_pool1d(env.t(x), 3, 2, 1, count_include_pad)
    ref = np.zeros((2, 3, 5))
    for t in range(5):
        cells = [q for q in range(2 * t - 1, 2 * t + 2) if 0 <= q < 9]
        ref[:, :, t] = x[:, :, cells].sum(-1) / (3 if count_include_pad else len(cells))
    env.close(out, ref)


def test_max_pool1d_with_indices(env, rng):
    x = rng.standard_normal((2, 2, 10))
    out, idx = module.max_pool1d_with_indices(env.t(x), 3, 2, 1, 2)
    lo = (10 + 2 - 2 * 2 - 1) // 2 + 1
    ref_idx = np.zeros((2, 2, lo), np.int64)
    for t in range(lo):
        cells = [q for q in (2 * t - 1, 2 * t + 1, 2 * t + 3) if 0 <= q < 10]
        ref_idx[:, :, t] = np.array(cells)[np.argmax(x[:, :, cells], axis=-1)]
    np.testing.assert_array_equal(idx.numpy(), ref_idx)
    env.close(out, np.take_along_axis(x, ref_idx, -1))
    env.close(module.max_pool1d(env.t(x), 3, 2, 1, 2), np.take_along_axis(x, ref_idx, -1))


def test_adaptive_avg_pool1d(env, rng):
    x = rng.standard_normal((2, 3, 7))
    out = module.adaptive_avg_pool1d(env.t(x), 3)
    # windows [floor(i*7/3), ceil((i+1)*7/3)): [0, 3), [2, 5), [4, 7)
    env.close(out, np.stack([x[..., 0:3].mean(-1), x[..., 2:5].mean(-1), x[..., 4:7].mean(-1)], -1))


@pytest.mark.parametrize(
    "k, s, p, d",
    [
        ((2, 2), (1, 1), (0, 0), (1, 1)),
        ((3, 2), (2, 1), (1, 0), (1, 2)),
        ((1, 1), (2, 3), (0, 1), (1, 1)),
    ],
)
def test_unfold4d(env, rng, k, s, p, d):
    x = rng.standard_normal((2, 3, 6, 5))
    out = module.unfold4d(env.t(x), list(k), list(s), list(p), list(d))
    oh = (6 + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (5 + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    ref = np.zeros((2, 3 * k[0] * k[1], oh * ow))
    for c in range(3):
        for i in range(k[0]):
            for j in range(k[1]):
                for y in range(oh):
                    for xx in range(ow):
                        r, q = y * s[0] + i * d[0] - p[0], xx * s[1] + j * d[1] - p[1]
                        if 0 <= r < 6 and 0 <= q < 5:
                            ref[:, (c * k[0] + i) * k[1] + j, y * ow + xx] = x[:, c, r, q]
    env.close(out, ref)
    # Burn's unfold4d test: ones [2, 3, 4, 4], kernel 2 -> ones [2, 12, 9]
    env.close(
        env.backend.unfold4d(env.p(np.ones((2, 3, 4, 4))), (2, 2), UnfoldOptions()),
        np.ones((2, 12, 9)),
    )


def test_embedding_and_backward(env, rng):
    weights = rng.standard_normal((5, 3))
    idx = np.array([[0, 4, 4], [2, 0, 1]])
    out = module.embedding(env.t(weights), env.t(idx))
    env.close(out, weights[idx])
    g = rng.standard_normal((2, 3, 3))
    dw = env.backend.embedding_backward(
        env.p(weights), env.p(g), idx.astype(env.backend.int_dtype.np)
    )
    ref = np.zeros_like(weights)
    for b in range(2):
        for t in range(3):
            ref[idx[b, t]] += g[b, t]
    env.close(dw, ref)
