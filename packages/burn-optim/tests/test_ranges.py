"""Optimizer and scheduler settings are range-checked when built, naming the config and field
(issue 21: a learning rate of NaN, Adam beta_1 2.0 or epsilon NaN used to train a model of NaNs)."""

import math

import pytest
from burn_autodiff import Autodiff
from burn_ndarray import NdArray
from burn_nn import ConfigError, LinearConfig
from burn_optim import (
    AdaGradConfig,
    AdamConfig,
    AdamWConfig,
    GradientClipping,
    GradientsParams,
    MomentumConfig,
    RmsPropConfig,
    SgdConfig,
    WeightDecayConfig,
)
from burn_optim.lr_scheduler import (
    ConstantLr,
    NoamLrSchedulerConfig,
    StepLrSchedulerConfig,
    as_lr_scheduler,
)
from burn_tensor import Tensor

NAN, INF = math.nan, math.inf

BAD_CONFIGS = [
    (
        lambda: AdamConfig().with_beta_1(2.0),
        r"AdamConfig: beta_1 must be a finite number in \[0.0, 1.0\), got 2.0",
    ),
    (lambda: AdamConfig().with_beta_1(1.0), r"AdamConfig: beta_1 .* got 1.0"),
    (lambda: AdamConfig().with_beta_2(NAN), r"AdamConfig: beta_2 .* got nan"),
    (
        lambda: AdamConfig().with_epsilon(NAN),
        r"AdamConfig: epsilon must be a finite number >= 0.0, got nan",
    ),
    (lambda: AdamConfig().with_epsilon(-1e-8), r"AdamConfig: epsilon .* got -1e-08"),
    (
        lambda: AdamConfig().with_weight_decay(WeightDecayConfig(INF)),
        r"AdamConfig.weight_decay: penalty .* got inf",
    ),
    (lambda: AdamWConfig().with_beta_1(-0.1), r"AdamWConfig: beta_1 .* got -0.1"),
    (lambda: AdamWConfig().with_weight_decay(NAN), r"AdamWConfig: weight_decay .* got nan"),
    (
        lambda: SgdConfig().with_momentum(MomentumConfig(momentum=NAN)),
        r"SgdConfig.momentum: momentum .* got nan",
    ),
    (
        lambda: SgdConfig().with_momentum(MomentumConfig(dampening=1.5)),
        r"SgdConfig.momentum: dampening .* in \[0.0, 1.0\], got 1.5",
    ),
    (
        lambda: SgdConfig().with_weight_decay(WeightDecayConfig(-1.0)),
        r"SgdConfig.weight_decay: penalty .* got -1.0",
    ),
    (lambda: RmsPropConfig().with_alpha(1.5), r"RmsPropConfig: alpha .* got 1.5"),
    (lambda: RmsPropConfig().with_epsilon(INF), r"RmsPropConfig: epsilon .* got inf"),
    (lambda: AdaGradConfig().with_lr_decay(-1.0), r"AdaGradConfig: lr_decay .* got -1.0"),
]


@pytest.mark.parametrize("case", range(len(BAD_CONFIGS)))
def test_bad_optimizer_settings_are_refused_at_init(case):
    make, message = BAD_CONFIGS[case]
    with pytest.raises(ConfigError, match=message):
        make().init()


@pytest.mark.parametrize("make", [AdamConfig, AdamWConfig, SgdConfig, RmsPropConfig, AdaGradConfig])
def test_defaults_and_edges_are_accepted(make):
    make().init()
    AdamConfig().with_beta_1(0.0).with_epsilon(0.0).init()  # PyTorch accepts both as well
    SgdConfig().with_momentum(MomentumConfig(momentum=0.0, dampening=1.0)).init()


@pytest.mark.parametrize("threshold", [NAN, INF, 0.0, -1.0])
def test_gradient_clipping_threshold(threshold):
    for make in (GradientClipping.Value, GradientClipping.Norm):
        with pytest.raises(ConfigError, match="threshold must be a finite number > 0.0"):
            make(threshold)


@pytest.mark.parametrize("lr", [NAN, INF, -INF, -1.0])
def test_learning_rate_of_a_step(lr):
    device = Autodiff(NdArray()).device()
    model = LinearConfig(2, 1).init(device)
    grads = GradientsParams.from_grads(
        model.forward(Tensor.ones([1, 2], device)).sum().backward(), model
    )
    with pytest.raises(
        ConfigError, match=f"step: learning rate must be a finite number >= 0.0, got {lr}"
    ):
        AdamConfig().init().step(lr, model, grads)


@pytest.mark.parametrize("lr", [NAN, INF, -1.0])
def test_learning_rate_of_a_constant_schedule(lr):
    with pytest.raises(ConfigError, match="ConstantLr: learning rate"):
        as_lr_scheduler(lr)
    with pytest.raises(ConfigError, match="ConstantLr: learning rate"):
        ConstantLr(lr)


def test_scheduler_configs_refuse_non_finite_values():
    with pytest.raises(ConfigError, match="StepLrSchedulerConfig: initial_lr .* got nan"):
        StepLrSchedulerConfig(NAN, 2).init()
    with pytest.raises(ConfigError, match="StepLrSchedulerConfig: gamma .* got inf"):
        StepLrSchedulerConfig(0.1, 2).with_gamma(INF).init()
    with pytest.raises(ConfigError, match="NoamLrSchedulerConfig: factor .* got nan"):
        NoamLrSchedulerConfig(NAN).init()
