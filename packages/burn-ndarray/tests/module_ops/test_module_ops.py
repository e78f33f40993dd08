"""1-D pooling ops (through the base-class defaults onto the 2-D kernels) and embedding.

The conv ops (1-D and 2-D, unfold4d) are tested by the conformance suite (test_conformance.py)."""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import module


def _dot(a, b) -> float:
    return float(np.sum(np.asarray(a, np.float64) * np.asarray(b, np.float64)))


@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool1d_and_backward(env, rng, count_include_pad):
    x = rng.standard_normal((2, 3, 9))
    out = module.avg_pool1d(env.t(x), 3, 2, 1, count_include_pad)
    ref = np.zeros((2, 3, 5))
    for t in range(5):
        cells = [q for q in range(2 * t - 1, 2 * t + 2) if 0 <= q < 9]
        ref[:, :, t] = x[:, :, cells].sum(-1) / (3 if count_include_pad else len(cells))
    env.close(out, ref)
    g = env.p(rng.standard_normal(ref.shape))
    dx = env.backend.avg_pool1d_backward(env.p(x), g, 3, 2, 1, count_include_pad)
    assert _dot(x, dx) == pytest.approx(_dot(out.numpy(), g), rel=env.tol * 10, abs=env.tol * 10)


def test_max_pool1d_with_indices_and_backward(env, rng):
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
    g = rng.standard_normal(ref_idx.shape)
    dx = env.backend.max_pool1d_with_indices_backward(env.p(x), 3, 2, 1, 2, env.p(g), idx.numpy())
    ref_dx = np.zeros_like(x)
    for pos in np.ndindex(*ref_idx.shape):
        ref_dx[pos[0], pos[1], ref_idx[pos]] += g[pos]
    env.close(dx, ref_dx)


def test_adaptive_avg_pool1d_and_backward(env, rng):
    x = rng.standard_normal((2, 3, 7))
    out = module.adaptive_avg_pool1d(env.t(x), 3)
    # windows [floor(i*7/3), ceil((i+1)*7/3)): [0, 3), [2, 5), [4, 7)
    env.close(out, np.stack([x[..., 0:3].mean(-1), x[..., 2:5].mean(-1), x[..., 4:7].mean(-1)], -1))
    g = env.p(rng.standard_normal((2, 3, 3)))
    dx = env.backend.adaptive_avg_pool1d_backward(env.p(x), g)
    assert dx.shape == x.shape
    assert _dot(x, dx) == pytest.approx(_dot(out.numpy(), g), rel=env.tol * 10, abs=env.tol * 10)


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
