"""CosineEmbeddingLoss, PoissonNllLoss, GaussianNoise against numpy float64 (issue 38 item 6).

References are written out from the definitions (Burn's `cosine_embedding.rs`, `poisson.rs`,
`noise.rs`); the values were also cross-checked once against torch 2.13's `CosineEmbeddingLoss`
and `PoissonNLLLoss` (not a test dependency).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_ndarray import NdArray
from burn_nn import (
    CosineEmbeddingLossConfig,
    GaussianNoiseConfig,
    PoissonNllLossConfig,
)
from burn_nn.loss import Reduction
from burn_tensor import Tensor, TensorCheckError

DEV = NdArray(float_dtype="float64").device()
AD = Autodiff(NdArray(float_dtype="float64")).device()
RNG = np.random.default_rng(38)


def t(x, dev=DEV):
    return Tensor.from_data(np.asarray(x, dtype=np.float64), dev)


def _np_cos_emb(a, b, y, margin):
    dot = (a * b).sum(1)
    na = np.maximum(np.sqrt((a * a).sum(1)), 1e-8)
    nb = np.maximum(np.sqrt((b * b).sum(1)), 1e-8)
    cos = dot / (na * nb)
    return np.where(y == 1, 1 - cos, np.where(y == -1, np.maximum(0.0, cos - margin), 0.0))


@pytest.mark.parametrize("margin", [0.0, 0.3, -0.2])
def test_cosine_embedding_loss(margin):
    a, b = RNG.normal(size=(6, 5)), RNG.normal(size=(6, 5))
    y = np.array([1, -1, 1, -1, -1, 0])
    want = _np_cos_emb(a, b, y, margin)
    for reduction, red in (("Mean", np.mean), ("Sum", np.sum)):
        loss = CosineEmbeddingLossConfig(margin=margin, reduction=reduction).init()
        got = loss.forward_no_reduction(t(a), t(b), Tensor.from_ints(y, DEV))
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-15)
        out = loss.forward(t(a), t(b), Tensor.from_ints(y, DEV))
        np.testing.assert_allclose(out.numpy(), [red(want)], rtol=1e-12)


def test_cosine_embedding_loss_checks_and_gradient():
    with pytest.raises(ValueError, match="Mean or Sum"):
        CosineEmbeddingLossConfig(reduction="BatchMean").init()
    loss = CosineEmbeddingLossConfig().init()
    with pytest.raises(TensorCheckError, match="target has 3 labels for a batch of 2"):
        loss.forward(t(np.ones((2, 3))), t(np.ones((2, 3))), Tensor.from_ints([1, 1, 1], DEV))
    with pytest.raises(TensorCheckError, match="input1 .* and input2 .* differ"):
        loss.forward(t(np.ones((2, 3))), t(np.ones((2, 4))), Tensor.from_ints([1, 1], DEV))
    # d/da (1 - cos(a, b)) for a similar pair, by central differences
    a, b = RNG.normal(size=(1, 4)), RNG.normal(size=(1, 4))
    x = t(a, AD).require_grad()
    g = x.grad(loss.forward(x, t(b, AD), Tensor.from_ints([1], AD)).backward()).numpy()
    eps = 1e-6
    num = [
        (_np_cos_emb(a + eps * e, b, np.array([1]), 0)[0]
         - _np_cos_emb(a - eps * e, b, np.array([1]), 0)[0]) / (2 * eps)
        for e in np.eye(4)[:, None, :]
    ]
    np.testing.assert_allclose(g[0], num, rtol=1e-6)


def _np_poisson(p, y, log_input, full, eps=1e-8):
    loss = np.exp(p) - y * p if log_input else p - y * np.log(p + eps)
    if full:
        with np.errstate(divide="ignore", invalid="ignore"):
            st = y * np.log(y) - y + 0.5 * np.log(2 * math.pi * y)
        loss = loss + np.where(y > 1, st, 0.0)
    return loss


@pytest.mark.parametrize("log_input", [True, False])
@pytest.mark.parametrize("full", [False, True])
def test_poisson_nll_loss(log_input, full):
    y = np.array([1.0, 4.5, 2.5, 0.0, 0.0, 2.0])
    p = np.array([0.0, 0.0, -40.0, 1.0, 2.0, 3.0]) if log_input else np.array(
        [0.5, 1.0, 3.0, 0.0, 2.0, 1.5]
    )
    loss = PoissonNllLossConfig(log_input=log_input, full=full).init()
    want = _np_poisson(p, y, log_input, full)
    np.testing.assert_allclose(loss.forward_no_reduction(t(p), t(y)).numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(loss.forward(t(p), t(y)).numpy(), [want.mean()], rtol=1e-12)
    np.testing.assert_allclose(
        loss.forward(t(p), t(y), Reduction.Sum).numpy(), [want.sum()], rtol=1e-12
    )


def test_poisson_burn_literal_and_checks():
    # Burn's poisson.rs test: mean 21.0247 for these inputs (log_input, not full)
    p = t([0.0, 0.0, -40.0, 1.0, 2.0, 3.0])
    y = t([1.0, 4.5, 2.5, 0.0, 0.0, 2.0])
    got = PoissonNllLossConfig().init().forward(p, y).numpy()[0]
    assert abs(got - np.mean(_np_poisson(p.numpy(), y.numpy(), True, False))) < 1e-12
    loss = PoissonNllLossConfig(log_input=False).init()
    with pytest.raises(TensorCheckError, match="targets must be >= 0"):
        loss.forward(t([1.0]), t([-1.0]))
    with pytest.raises(TensorCheckError, match="predictions must be >= 0"):
        loss.forward(t([-1.0]), t([1.0]))
    with pytest.raises(ValueError, match="eps must be > 0"):
        PoissonNllLossConfig(eps=0.0).init()
    # full=True has a finite gradient where targets are 0 (the masked Stirling term)
    x = t([0.5, 1.0], AD).require_grad()
    full = PoissonNllLossConfig(full=True).init()
    g = x.grad(full.forward(x, t([0.0, 3.0], AD)).backward()).numpy()
    np.testing.assert_allclose(g, (np.exp([0.5, 1.0]) - [0.0, 3.0]) / 2, rtol=1e-12)


def test_gaussian_noise():
    noise = GaussianNoiseConfig(0.5).init()
    x = t(np.ones((200, 100)))
    assert noise.forward(x) is x  # not training: identity
    xa = t(np.ones((200, 100)), AD).require_grad()
    AD.backend.seed(7)
    y = noise.forward(xa)
    d = y.numpy() - 1.0
    # 20000 draws: the sample mean is within 4 sigma/sqrt(n) = 0.014, the std within 2%
    assert abs(d.mean()) < 0.014 and abs(d.std() - 0.5) < 0.01
    g = xa.grad(y.sum().backward()).numpy()
    assert np.all(g == 1.0)  # the noise is a constant: the gradient passes through
    assert GaussianNoiseConfig(0.0).init().forward(xa) is xa
    with pytest.raises(ValueError, match="std must be a finite number >= 0"):
        GaussianNoiseConfig(-0.1).init()
