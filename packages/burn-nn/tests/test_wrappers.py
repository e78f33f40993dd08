"""NormalizationConfig/Normalization and ActivationConfig/Activation (Burn's wrapper enums)."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_nn import (
    Activation,
    ActivationConfig,
    BatchNormConfig,
    GroupNormConfig,
    HardSigmoidConfig,
    InstanceNormConfig,
    LayerNormConfig,
    LeakyReluConfig,
    Normalization,
    NormalizationConfig,
    PReluConfig,
    RmsNormConfig,
    SoftplusConfig,
    SwiGluConfig,
    config,
)
from burn_tensor import Tensor
from burn_tensor import activation as A

DEV = NdArray(float_dtype="float64").device()
X = Tensor.from_data(np.random.default_rng(0).normal(size=(2, 4, 3)), DEV)

NORMS = [
    NormalizationConfig.Batch(BatchNormConfig(4)),
    NormalizationConfig.Group(GroupNormConfig(2, 4)),
    NormalizationConfig.Instance(InstanceNormConfig(4)),
    NormalizationConfig.Layer(LayerNormConfig(3)),
    NormalizationConfig.Rms(RmsNormConfig(3)),
]


@pytest.mark.parametrize("cfg", NORMS, ids=lambda c: c.variant)
def test_normalization_forwards_to_its_variant(cfg):
    norm = cfg.init(DEV)
    assert isinstance(norm, Normalization) and norm.variant == cfg.variant
    want = norm.inner.forward(X).numpy()
    np.testing.assert_array_equal(norm.forward(X).numpy(), want)
    assert norm.num_params() == norm.inner.num_params() > 0
    # serde shape of Burn's enum config, and back
    back = NormalizationConfig.from_json(cfg.to_json())
    assert back == cfg and list(cfg._to_json_value()) == [cfg.variant]
    wider = cfg.with_num_features(8)
    assert wider.num_features() == 8 and wider.variant == cfg.variant
    assert NormalizationConfig.from_config(cfg.config) == cfg


def test_normalization_errors_and_nesting():
    with pytest.raises(TypeError, match="takes LayerNormConfig"):
        NormalizationConfig.Layer(BatchNormConfig(3))
    with pytest.raises(TypeError, match="no variant takes"):
        NormalizationConfig.from_config(LeakyReluConfig())

    @config
    class Block:
        norm: NormalizationConfig
        act: ActivationConfig

    b = Block(NormalizationConfig.Rms(RmsNormConfig(5)), ActivationConfig.Gelu)
    again = Block.from_json(b.to_json())
    assert again == b
    assert '"Gelu"' in b.to_json() and '"Rms"' in b.to_json()


ACTS = [
    (ActivationConfig.Gelu, A.gelu),
    (ActivationConfig.Relu, A.relu),
    (ActivationConfig.Sigmoid, A.sigmoid),
    (ActivationConfig.Tanh, A.tanh),
    (ActivationConfig.HardSwish, A.hard_swish),
    (ActivationConfig.LeakyRelu(LeakyReluConfig(negative_slope=0.2)), lambda x: A.leaky_relu(x, 0.2)),
    (ActivationConfig.HardSigmoid(HardSigmoidConfig()), lambda x: A.hard_sigmoid(x, 0.2, 0.5)),
    (ActivationConfig.Softplus(SoftplusConfig(beta=2.0)), lambda x: A.softplus(x, 2.0)),
]


@pytest.mark.parametrize("cfg,fn", ACTS, ids=[c[0].variant for c in ACTS])
def test_activation_forwards_to_its_variant(cfg, fn):
    act = cfg.init(DEV)
    assert isinstance(act, Activation) and act.variant == cfg.variant
    np.testing.assert_allclose(act.forward(X).numpy(), fn(X).numpy(), rtol=1e-12)
    assert ActivationConfig.from_json(cfg.to_json()) == cfg


def test_activation_with_params():
    prelu = ActivationConfig.PRelu(PReluConfig()).init(DEV)
    assert prelu.num_params() == 1
    np.testing.assert_allclose(prelu.forward(X).numpy(), prelu.inner.forward(X).numpy())
    swiglu = ActivationConfig.SwiGlu(SwiGluConfig(3, 5)).init(DEV)
    assert swiglu.forward(X).dims() == [2, 4, 5]
    with pytest.raises(TypeError, match="takes no config"):
        ActivationConfig("Relu", LeakyReluConfig())
    with pytest.raises(ValueError, match="unknown variant"):
        ActivationConfig("Swish")
