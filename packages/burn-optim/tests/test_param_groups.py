"""Parameter groups (`ParamGroup`, `optim.with_groups`): each group's lr / weight decay, the
defaults for parameters in no group, and the refusals. Expected numbers are derived by hand from
each rule's formula with gradient 1 (the loss is the sum of the parameters) and parameter 2."""

import pytest
from burn_nn import ConfigError, Module, Param
from burn_optim import (
    AdamConfig,
    AdamWConfig,
    GradientsParams,
    MuonConfig,
    OptimizerAdaptor,
    ParamGroup,
    SgdConfig,
    SimpleOptimizer,
    WeightDecayConfig,
)
from burn_tensor import Tensor


class Inner(Module):
    w: Param


class Net(Module):
    enc: Inner
    a: Param
    b: Param
    c: Param


def p(device, shape=(2,)):
    return Param.from_tensor(Tensor.full(list(shape), 2.0, device))


def net(device):
    return Net(enc=Inner(w=p(device)), a=p(device), b=p(device), c=p(device))


def step(optim, model, lr):
    total = sum(q.val().sum() for q in model.parameters())
    return optim.step(lr, model, GradientsParams.from_grads(total.backward(), model))


def val(param):
    return param.val().numpy().tolist()


def test_sgd_groups_lr_weight_decay_and_default(ad64):
    model = net(ad64)
    optim = SgdConfig(weight_decay=WeightDecayConfig(0.5)).init().with_groups(
        [
            ParamGroup(model.a, lr=0.01, weight_decay=0.0),
            ParamGroup("b", lr_scale=2.0, weight_decay=1.0),
            ParamGroup(model.enc, weight_decay=0.25),
        ]
    )
    new = step(optim, model, 0.1)
    # a: lr 0.01, no decay: 2 - 0.01 * 1
    assert val(new.a) == pytest.approx([1.99] * 2, abs=1e-15)
    # b: lr 0.1 * 2, coupled decay 1.0: 2 - 0.2 * (1 + 1.0 * 2)
    assert val(new.b) == pytest.approx([1.4] * 2, abs=1e-15)
    # enc.w: step lr 0.1, decay 0.25: 2 - 0.1 * (1 + 0.25 * 2)
    assert val(new.enc.w) == pytest.approx([1.85] * 2, abs=1e-15)
    # c, in no group: the optimizer's own lr 0.1 and decay 0.5: 2 - 0.1 * (1 + 0.5 * 2)
    assert val(new.c) == pytest.approx([1.8] * 2, abs=1e-15)


def test_adamw_groups_decoupled_decay(ad64):
    model = net(ad64)
    optim = AdamWConfig(weight_decay=0.01).init().with_groups(
        [ParamGroup(["*.bias", "enc.*", model.a.id], lr=0.05, weight_decay=0.5)]
    )
    new = step(optim, model, 0.1)
    # first Adam step: m_hat = g = 1, v_hat = g^2 = 1, delta = 1 / (1 + 1e-5)
    delta = 1.0 / (1.0 + 1e-5)
    group = 2.0 * (1.0 - 0.05 * 0.5) - 0.05 * delta
    default = 2.0 * (1.0 - 0.1 * 0.01) - 0.1 * delta
    assert val(new.a) == pytest.approx([group] * 2, abs=1e-12)
    assert val(new.enc.w) == pytest.approx([group] * 2, abs=1e-12)
    assert val(new.b) == pytest.approx([default] * 2, abs=1e-12)
    assert val(new.c) == pytest.approx([default] * 2, abs=1e-12)


def test_adam_coupled_decay_per_group_over_two_steps(ad64):
    """Adam's batched `step_many` runs once per group; each keeps its own moments."""
    model = net(ad64)
    optim = AdamConfig().init().with_groups([ParamGroup("a", weight_decay=1.0, lr=0.2)])
    new = step(optim, model, 0.1)
    g = 1.0 + 1.0 * 2.0  # coupled decay adds penalty * param to the gradient
    a1 = 2.0 - 0.2 * g / (g + 1e-5)
    c1 = 2.0 - 0.1 * 1.0 / (1.0 + 1e-5)
    assert val(new.a) == pytest.approx([a1] * 2, abs=1e-12)
    assert val(new.c) == pytest.approx([c1] * 2, abs=1e-12)
    new = step(optim, new, 0.1)
    g2 = 1.0 + a1
    m = 0.9 * 0.1 * g + 0.1 * g2
    v = 0.999 * 0.001 * g * g + 0.001 * g2 * g2
    a2 = a1 - 0.2 * (m / (1 - 0.9**2)) / ((v / (1 - 0.999**2)) ** 0.5 + 1e-5)
    assert val(new.a) == pytest.approx([a2] * 2, abs=1e-12)
    assert len(optim) == 4 and set(optim.to_record()) == {str(q.id) for q in model.parameters()}


def test_muon_matrix_group_with_own_lr(ad64):
    """A group gives Muon's matrix its own lr and decay. By hand: the gradient is ones(2, 2), a
    rank-1 matrix with singular value 2 (3.9 after Nesterov's 1 + 0.95); normalized it is
    ones/2 with singular value 1, which each Newton-Schulz round maps to a s + b s^3 + c s^5;
    the 2x2 shape gives an lr ratio of 1."""
    s = 1.0
    for _ in range(5):
        s = 3.4445 * s - 4.775 * s**3 + 2.0315 * s**5
    model = Inner(w=p(ad64, (2, 2)))
    base = step(MuonConfig().init(), model, 0.1)
    assert sum(val(base.w), []) == pytest.approx([2.0 - 0.1 * s / 2] * 4, abs=1e-12)
    optim = MuonConfig(weight_decay=WeightDecayConfig(0.2)).init()
    grouped = step(optim.with_groups([ParamGroup("w", lr=0.05, weight_decay=0.5)]), model, 0.3)
    # decay with the group's plain lr, then the update: 2 * (1 - 0.05 * 0.5) - 0.05 * s / 2
    want = 2.0 * (1.0 - 0.05 * 0.5) - 0.05 * s / 2
    assert sum(val(grouped.w), []) == pytest.approx([want] * 4, abs=1e-12)


def test_param_in_two_groups_by_id_is_refused(ad64):
    model = net(ad64)
    with pytest.raises(ValueError, match=rf"parameter {model.a.id} is in group 0 and group 1"):
        SgdConfig().init().with_groups([ParamGroup(model.a), ParamGroup([model.b, model.a])])


def test_param_in_two_groups_by_pattern_is_refused_and_nothing_changes(ad64):
    model = net(ad64)
    optim = AdamConfig().init().with_groups([ParamGroup("enc.*"), ParamGroup(model.enc.w.id)])
    with pytest.raises(ValueError, match=r"parameter 'enc.w' .* group 0 \('enc.\*'\) and group 1"):
        step(optim, model, 0.1)
    assert len(optim) == 0


def test_group_selecting_nothing_is_refused(ad64):
    optim = SgdConfig().init().with_groups([ParamGroup("*.bais", weight_decay=0.0)])
    with pytest.raises(ValueError, match=r"group 0 \('\*.bais'\) selects no parameter"):
        step(optim, net(ad64), 0.1)


@pytest.mark.parametrize(
    "kw,err,what",
    [
        (dict(lr=0.1, lr_scale=2.0), ValueError, "not both"),
        (dict(lr=-1.0), ConfigError, "lr"),
        (dict(weight_decay=float("nan")), ConfigError, "weight_decay"),
    ],
)
def test_bad_group_settings_are_refused(kw, err, what):
    with pytest.raises(err, match=what):
        ParamGroup("a", **kw)


def test_bad_selectors_are_refused():
    with pytest.raises(TypeError, match="got int"):
        ParamGroup([3])
    with pytest.raises(ValueError, match="selects no parameter"):
        ParamGroup([])


def test_weight_decay_on_a_rule_without_one_is_refused():
    class Plain(SimpleOptimizer):
        def step(self, lr, tensor, grad, state):
            return tensor - grad * lr, None

    with pytest.raises(TypeError, match="Plain has no weight decay"):
        OptimizerAdaptor(Plain()).with_groups([ParamGroup("a", weight_decay=0.1)])
    with pytest.raises(TypeError, match="item 0 is dict"):
        OptimizerAdaptor(Plain()).with_groups([{"params": "a"}])
