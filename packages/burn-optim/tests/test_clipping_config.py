"""Gradient clipping rules and config plumbing (JSON, with_grad_clipping on every config)."""

import numpy as np
import pytest
from burn_nn import ConfigError
from burn_optim import (
    AdaGradConfig,
    AdamConfig,
    AdamWConfig,
    GradientClipping,
    GradientClippingConfig,
    MomentumConfig,
    RmsPropConfig,
    SgdConfig,
    WeightDecayConfig,
)
from burn_tensor import Tensor


def test_value_and_per_tensor_norm(ad64):
    dev = ad64.inner()
    g = Tensor.from_data([[3.0, -4.0], [0.5, 0.0]], dev)
    np.testing.assert_allclose(
        GradientClipping.Value(1.0).clip_gradient(g).numpy(), [[1, -1], [0.5, 0]]
    )
    norm = np.linalg.norm([3, 4, 0.5])
    np.testing.assert_allclose(
        GradientClippingConfig.Norm(1.0).init().clip_gradient(g).numpy(),
        np.array([[3.0, -4.0], [0.5, 0.0]]) / norm,
        rtol=1e-12,
    )
    # Below the threshold: unchanged; an all-zero gradient stays zero (no division by zero).
    np.testing.assert_allclose(GradientClipping.Norm(10.0).clip_gradient(g).numpy(), g.numpy())
    z = Tensor.zeros([3], dev)
    assert GradientClipping.Norm(1.0).clip_gradient(z).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError):
        GradientClipping("Global", 1.0)


@pytest.mark.parametrize(
    "cfg",
    [SgdConfig(), AdamConfig(), AdamWConfig(), AdaGradConfig(), RmsPropConfig()],
    ids=lambda c: type(c).__name__,
)
def test_every_config_takes_clipping_and_round_trips_json(cfg):
    clipped = cfg.with_grad_clipping(GradientClippingConfig.Norm(2.5))
    assert clipped.grad_clipping == GradientClippingConfig.Norm(2.5)
    assert '"Norm": 2.5' in clipped.to_json()
    assert type(cfg).from_json(clipped.to_json()) == clipped
    optim = clipped.init()
    assert optim.has_gradient_clipping() and optim.grad_clipping() == GradientClipping.Norm(2.5)
    assert not cfg.init().has_gradient_clipping()


def test_nested_configs_round_trip():
    cfg = SgdConfig(
        weight_decay=WeightDecayConfig(1e-3), momentum=MomentumConfig(momentum=0.5, nesterov=True)
    )
    assert SgdConfig.from_json(cfg.to_json()) == cfg
    adam = AdamConfig(weight_decay=WeightDecayConfig(0.1), amsgrad=True)
    assert AdamConfig.from_json(adam.to_json()) == adam
    with pytest.raises(ConfigError):
        AdamConfig.from_json('{"grad_clipping": {"Global": 1.0}}')


def test_optimizer_with_grad_clipping_later(ad64):
    optim = SgdConfig().init().with_grad_clipping(GradientClippingConfig.Value(0.5))
    assert optim.grad_clipping() == GradientClipping.Value(0.5)
    assert not optim.with_grad_clipping(None).has_gradient_clipping()
