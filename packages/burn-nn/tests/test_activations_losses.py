import math

import numpy as np
import pytest
from burn_tensor import Tensor

from burn_nn import (
    GELU,
    Gelu,
    HardSigmoidConfig,
    LeakyReluConfig,
    Mish,
    PReluConfig,
    Relu,
    ReLU,
    Sigmoid,
    SiLU,
    SoftplusConfig,
    SwiGluConfig,
    Tanh,
)
from burn_nn.loss import (
    BinaryCrossEntropyLossConfig,
    CrossEntropyLossConfig,
    HuberLossConfig,
    KLDivLossConfig,
    MseLoss,
    Reduction,
    SmoothL1LossConfig,
)


def T(a, d):
    return Tensor.from_data(np.asarray(a, dtype=np.float64), d)


def close(t, ref, tol=1e-9):
    np.testing.assert_allclose(
        np.asarray(t.numpy()).reshape(np.shape(ref)), ref, rtol=tol, atol=tol
    )


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def softplus(x, b=1.0):
    return np.log1p(np.exp(b * x)) / b


def test_activation_modules(dev64, rng):
    x = rng.normal(size=(3, 4)) * 3
    t = T(x, dev64)
    erf = np.vectorize(math.erf)
    assert ReLU is Relu and GELU is Gelu
    close(Relu.new().forward(t), np.maximum(x, 0))
    close(Gelu().forward(t), 0.5 * x * (1 + erf(x / math.sqrt(2))), 1e-6)
    close(Sigmoid().forward(t), sigmoid(x))
    close(Tanh().forward(t), np.tanh(x))
    close(SiLU().forward(t), x * sigmoid(x))
    close(Mish().forward(t), x * np.tanh(softplus(x)))
    close(LeakyReluConfig().init().forward(t), np.where(x > 0, x, 0.01 * x))
    close(HardSigmoidConfig().init().forward(t), np.clip(0.2 * x + 0.5, 0, 1))
    close(SoftplusConfig(beta=2.0).init().forward(t), softplus(x, 2.0))
    pr = PReluConfig(num_parameters=4, alpha=0.3).init(dev64)
    assert pr.alpha.dims() == [4]
    close(pr.forward(t), np.where(x > 0, x, 0.3 * x))


def test_swiglu(dev64, rng):
    sw = SwiGluConfig(4, 3).init(dev64)
    assert sw.linear_inner.bias is None
    x = rng.normal(size=(2, 4))
    a = x @ sw.linear_inner.weight.val().numpy()
    b = x @ sw.linear_outer.weight.val().numpy()
    close(sw.forward(T(x, dev64)), a * sigmoid(a) * b)


def log_softmax(x):
    m = x.max(1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(1, keepdims=True))


def test_cross_entropy_variants(dev64, rng):
    x = rng.normal(size=(5, 4))
    t = np.array([0, 3, 1, 2, 3])
    lp = log_softmax(x)
    picked = lp[np.arange(5), t]
    ti = Tensor.from_ints(t, dev64)
    close(CrossEntropyLossConfig().init(dev64).forward(T(x, dev64), ti), -picked.mean())
    keep = t != 3
    close(
        CrossEntropyLossConfig(pad_tokens=[3]).init(dev64).forward(T(x, dev64), ti),
        -(picked * keep).sum() / 5,
    )
    w = np.array([1.0, 2.0, 0.5, 3.0])
    close(
        CrossEntropyLossConfig(weights=list(w)).init(dev64).forward(T(x, dev64), ti),
        -(w[t] * picked).sum() / w[t].sum(),
    )
    a = 0.1
    y = np.eye(4)[t] * (1 - a) + a / 4
    close(
        CrossEntropyLossConfig(smoothing=a).init(dev64).forward(T(x, dev64), ti),
        -(y * lp).sum(1).mean(),
    )
    p = np.exp(lp)
    close(
        CrossEntropyLossConfig(logits=False).init(dev64).forward(T(p, dev64), ti),
        -picked.mean(),
        1e-9,
    )
    with pytest.raises(ValueError):
        CrossEntropyLossConfig(smoothing=1.5).init(dev64)


def test_bce(dev64, rng):
    x = rng.normal(size=(4, 3))
    y = rng.integers(0, 2, size=(4, 3))
    yi = Tensor.from_ints(y, dev64)
    ref = -(y * np.log(sigmoid(x)) + (1 - y) * np.log(1 - sigmoid(x)))
    close(BinaryCrossEntropyLossConfig(logits=True).init().forward(T(x, dev64), yi), ref.mean())
    close(BinaryCrossEntropyLossConfig().init().forward(T(sigmoid(x), dev64), yi), ref.mean())
    w = np.array([1.0, 2.0, 3.0])
    close(
        BinaryCrossEntropyLossConfig(logits=True, weights=list(w)).init().forward(T(x, dev64), yi),
        (ref * w).mean(),
    )


def test_regression_losses(dev64, rng):
    p, y = rng.normal(size=(3, 4)) * 2, rng.normal(size=(3, 4))
    r = np.abs(p - y)
    P, Y = T(p, dev64), T(y, dev64)
    close(MseLoss().forward(P, Y, Reduction.Mean), (r**2).mean())
    close(MseLoss().forward(P, Y, Reduction.Sum), (r**2).sum())
    close(MseLoss().forward_no_reduction(P, Y), r**2)
    hub = np.where(r <= 0.7, 0.5 * r**2, 0.7 * (r - 0.35))
    close(HuberLossConfig(0.7).init().forward(P, Y), hub.mean())
    sl1 = np.where(r < 1.0, 0.5 * r**2, r - 0.5)
    close(SmoothL1LossConfig().init().forward(P, Y, Reduction.Sum), sl1.sum())


def test_kl_div(dev64, rng):
    inp = log_softmax(rng.normal(size=(3, 5)))
    tgt = np.exp(log_softmax(rng.normal(size=(3, 5))))
    tgt[0, 0] = 0.0
    ref = np.where(tgt > 0, tgt * (np.log(np.where(tgt > 0, tgt, 1)) - inp), 0)
    close(
        KLDivLossConfig().init().forward(T(inp, dev64), T(tgt, dev64), Reduction.BatchMean),
        ref.sum() / 3,
    )
    lt = np.log(tgt[1:])
    close(
        KLDivLossConfig(log_target=True)
        .init()
        .forward(T(inp[1:], dev64), T(lt, dev64), Reduction.Sum),
        (np.exp(lt) * (lt - inp[1:])).sum(),
    )
