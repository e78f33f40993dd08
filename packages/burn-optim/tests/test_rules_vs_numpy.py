"""20 steps of every optimizer on a fixed problem vs an independent numpy float64 implementation
of the published rule (with Burn's conventions: epsilon outside the sqrt, per-tensor norm clipping,
first momentum step without dampening)."""

import numpy as np
import pytest
from burn_optim import (
    AdaGradConfig,
    AdamConfig,
    AdamWConfig,
    GradientClippingConfig,
    GradientsParams,
    MomentumConfig,
    RmsPropConfig,
    SgdConfig,
    WeightDecayConfig,
)

STEPS = 20
LR = 0.05


# -- numpy references: each takes (param, grad, state dict, lr, t) and returns the new param -------
def np_sgd(momentum=None, dampening=0.0, nesterov=False, wd=0.0):
    def step(p, g, s, lr, t):
        g = g + wd * p
        if momentum is not None:
            s["v"] = g.copy() if t == 1 else momentum * s["v"] + (1 - dampening) * g
            g = g + momentum * s["v"] if nesterov else s["v"]
        return p - lr * g

    return step


def np_adam(b1=0.9, b2=0.999, eps=1e-5, amsgrad=False, wd=0.0, decoupled=0.0):
    def step(p, g, s, lr, t):
        g = g + wd * p
        s["m"] = b1 * s.get("m", 0.0) + (1 - b1) * g
        s["v"] = b2 * s.get("v", 0.0) + (1 - b2) * g * g
        v = s["v"]
        if amsgrad:
            s["vmax"] = v = np.maximum(s.get("vmax", v), v)
        m_hat, v_hat = s["m"] / (1 - b1**t), v / (1 - b2**t)
        return p * (1 - lr * decoupled) - lr * m_hat / (np.sqrt(v_hat) + eps)

    return step


def np_adagrad(lr_decay=0.0, eps=1e-5, wd=0.0):
    def step(p, g, s, lr, t):
        g = g + wd * p
        s["sum"] = s.get("sum", 0.0) + g * g
        clr = lr / (1 + (t - 1) * lr_decay)
        return p - clr * g / (np.sqrt(s["sum"]) + eps)

    return step


def np_rmsprop(alpha=0.99, momentum=0.9, eps=1e-5, centered=False, wd=0.0):
    def step(p, g, s, lr, t):
        g = g + wd * p
        s["sq"] = alpha * s.get("sq", 0.0) + (1 - alpha) * g * g
        avg = s["sq"]
        if centered:
            s["ga"] = alpha * s.get("ga", 0.0) + (1 - alpha) * g
            avg = avg - s["ga"] ** 2
        d = g / (np.sqrt(avg) + eps)
        if momentum > 0:
            s["buf"] = momentum * s.get("buf", 0.0) + d
            d = s["buf"]
        return p - lr * d

    return step


def clip_value(x):
    return lambda g: np.clip(g, -x, x)


def clip_norm(x):
    tiny = np.finfo(np.float64).tiny
    return lambda g: g * min(1.0, x / (np.linalg.norm(g) + tiny))


CASES = [
    ("sgd", SgdConfig(), np_sgd(), None),
    (
        "sgd-momentum-burn-default",
        SgdConfig().with_momentum(MomentumConfig()),
        np_sgd(0.9, 0.1),
        None,
    ),
    (
        "sgd-nesterov-wd",
        SgdConfig(
            weight_decay=WeightDecayConfig(0.01),
            momentum=MomentumConfig(momentum=0.8, dampening=0.0, nesterov=True),
        ),
        np_sgd(0.8, 0.0, True, wd=0.01),
        None,
    ),
    (
        "sgd-clip-value",
        SgdConfig().with_grad_clipping(GradientClippingConfig.Value(0.1)),
        np_sgd(),
        clip_value(0.1),
    ),
    ("adam-default", AdamConfig(), np_adam(), None),
    (
        "adam-eps1e-8-betas",
        AdamConfig(beta_1=0.8, beta_2=0.99, epsilon=1e-8),
        np_adam(0.8, 0.99, 1e-8),
        None,
    ),
    (
        "adam-amsgrad-wd",
        AdamConfig(amsgrad=True, weight_decay=WeightDecayConfig(0.05)),
        np_adam(amsgrad=True, wd=0.05),
        None,
    ),
    (
        "adam-clip-norm",
        AdamConfig().with_grad_clipping(GradientClippingConfig.Norm(0.2)),
        np_adam(),
        clip_norm(0.2),
    ),
    ("adamw-default", AdamWConfig(), np_adam(decoupled=1e-4), None),
    (
        "adamw-wd0.1-amsgrad",
        AdamWConfig(weight_decay=0.1, amsgrad=True),
        np_adam(amsgrad=True, decoupled=0.1),
        None,
    ),
    ("adamw-no-decay", AdamWConfig(weight_decay=0.0, epsilon=1e-8), np_adam(eps=1e-8), None),
    ("adagrad-default", AdaGradConfig(), np_adagrad(), None),
    (
        "adagrad-decay-wd",
        AdaGradConfig(lr_decay=0.1, epsilon=1e-7, weight_decay=WeightDecayConfig(0.02)),
        np_adagrad(0.1, 1e-7, 0.02),
        None,
    ),
    ("rmsprop-default", RmsPropConfig(), np_rmsprop(), None),
    (
        "rmsprop-centered-no-momentum",
        RmsPropConfig(centered=True, momentum=0.0, alpha=0.9),
        np_rmsprop(0.9, 0.0, centered=True),
        None,
    ),
    (
        "rmsprop-centered-momentum-wd-clip",
        RmsPropConfig(
            centered=True,
            momentum=0.5,
            weight_decay=WeightDecayConfig(0.01),
            grad_clipping=GradientClippingConfig.Norm(0.3),
        ),
        np_rmsprop(momentum=0.5, centered=True, wd=0.01),
        clip_norm(0.3),
    ),
]


@pytest.mark.parametrize("name,cfg,ref,clip", CASES, ids=[c[0] for c in CASES])
def test_twenty_steps_match_numpy(name, cfg, ref, clip, ad64, problem):
    make_problem, mse, np_grads = problem
    model, w, b, x, y = make_problem(ad64)
    optim = cfg.init()
    sw, sb = {}, {}
    # A varying LR also checks that lr is taken at each step (as from a scheduler).
    for t in range(1, STEPS + 1):
        lr = LR * (1.0 - 0.02 * t)
        grads = GradientsParams.from_grads(mse(model, x, y, ad64).backward(), model)
        model = optim.step(lr, model, grads)
        gw, gb = np_grads(w, b, x, y)
        if clip is not None:
            # Burn clips the raw gradient (before weight decay).
            gw, gb = clip(gw), clip(gb)
        w, b = ref(w, gw, sw, lr, t), ref(b, gb, sb, lr, t)
    np.testing.assert_allclose(model.w.val().numpy(), w, rtol=0, atol=1e-6)
    np.testing.assert_allclose(model.b.val().numpy(), b, rtol=0, atol=1e-6)
    # The problem is non-trivial: parameters moved.
    assert np.abs(w - make_problem(ad64)[1]).max() > 1e-3


def test_defaults_are_burns():
    assert (
        AdamConfig().beta_1,
        AdamConfig().beta_2,
        AdamConfig().epsilon,
        AdamConfig().amsgrad,
    ) == (0.9, 0.999, 1e-5, False)
    assert AdamConfig().weight_decay is None and AdamConfig().grad_clipping is None
    assert (
        AdamWConfig().weight_decay,
        AdamWConfig().epsilon,
        AdamWConfig().cautious_weight_decay,
    ) == (1e-4, 1e-5, False)
    assert (AdaGradConfig().lr_decay, AdaGradConfig().epsilon) == (0.0, 1e-5)
    r = RmsPropConfig()
    assert (r.alpha, r.momentum, r.epsilon, r.centered) == (0.99, 0.9, 1e-5, False)
    m = MomentumConfig()
    assert (m.momentum, m.dampening, m.nesterov) == (0.9, 0.1, False)
    s = SgdConfig()
    assert s.weight_decay is None and s.momentum is None and s.gradient_clipping is None


def test_cautious_adamw_skips_decay_where_signs_differ(ad64):
    from burn_tensor import Tensor

    p = Tensor.from_data([1.0, -1.0, 2.0], ad64.inner())
    g = Tensor.from_data([1.0, 1.0, -1.0], ad64.inner())
    rule = AdamWConfig(weight_decay=0.5, cautious_weight_decay=True).build()
    plain = AdamWConfig(weight_decay=0.0).build()
    new, _ = rule.step(0.1, p, g, None)
    ref, _ = plain.step(0.1, p, g, None)
    # Decay applies only where sign(param) == sign(first moment): element 0.
    np.testing.assert_allclose(new.numpy() - ref.numpy(), [-0.05, 0.0, 0.0], atol=1e-12)
