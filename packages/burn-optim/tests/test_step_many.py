"""The batched step: `SimpleOptimizer.step_many` / Adam's `adam_update_many` groups give the same
results as one `step` per parameter, a failing step changes no state, and a parameter that
appears twice in a module gets one update everywhere."""

import numpy as np
import pytest
from burn_nn import LinearConfig, Module
from burn_optim import AdamConfig, GradientsParams, SimpleOptimizer, WeightDecayConfig
from burn_optim._adam import Adam
from burn_tensor import Tensor, TensorData


class Two(Module):
    a: Module
    b: Module

    def forward(self, x):
        return self.b.forward(self.a.forward(x))


def _data(device, shapes, seed):
    rng = np.random.default_rng(seed)
    return [Tensor.from_data(rng.uniform(-2, 2, s), device) for s in shapes]


@pytest.mark.parametrize("decay", [None, WeightDecayConfig(0.01)])
def test_adam_step_many_equals_step_per_parameter(ad32, decay):
    inner = ad32.inner()
    shapes = [(3, 4), (4,), (1,), (2, 3, 5)]
    rule = Adam(weight_decay=decay)
    tensors, states = _data(inner, shapes, 1), [None] * len(shapes)
    tensors_1, states_1 = list(tensors), list(states)
    for step in range(3):
        grads = _data(inner, shapes, 10 + step)
        tensors, states = rule.step_many(0.01, tensors, grads, states)
        one = [rule.step(0.01, t, g, s) for t, g, s in zip(tensors_1, grads, states_1)]
        tensors_1, states_1 = [t for t, _ in one], [s for _, s in one]
        for a, b in zip(tensors, tensors_1):
            np.testing.assert_array_equal(a.numpy(), b.numpy())  # the same op, the same bits
        for a, b in zip(states, states_1):
            assert a["momentum"]["time"] == b["momentum"]["time"] == step + 1
            for k in ("moment_1", "moment_2"):
                np.testing.assert_array_equal(a["momentum"][k].numpy(), b["momentum"][k].numpy())


def test_adam_groups_parameters_by_step_count(ad32):
    # `a` gets no gradient on the first step, so on the second its state is one step behind
    # `b`'s: two groups (a first step and a second), each equal to the per-parameter rule.
    model = Two(a=LinearConfig(2, 2).init(ad32), b=LinearConfig(2, 1).init(ad32))
    optim = AdamConfig().init()
    x = Tensor.ones([1, 2], ad32)
    loss = model.b.forward(x).sum()
    model = optim.step(0.1, model, GradientsParams.from_grads(loss.backward(), model))
    loss = model.forward(x).sum()
    g = GradientsParams.from_grads(loss.backward(), model)
    grads = {p.id: g.get(p.id) for p in model.parameters()}
    want = {}
    rule, rec = optim.optim(), optim.to_record()
    for p in model.parameters():
        state = rec.get(str(p.id))
        if state is not None:
            state = {"momentum": {k: (Tensor.from_data(v, ad32.inner()) if isinstance(v, TensorData) else v)
                                  for k, v in state["momentum"].items()}}  # fmt: skip
        want[p.id] = rule.step(0.1, p.val().inner(), grads[p.id], state)[0].numpy()
    new = optim.step(0.1, model, g)
    for p in new.parameters():
        np.testing.assert_array_equal(p.val().inner().numpy(), want[p.id])
    times = {k: v["momentum"]["time"] for k, v in optim.to_record().items()}
    assert times == {str(model.a.weight.id): 1, str(model.a.bias.id): 1,
                     str(model.b.weight.id): 2, str(model.b.bias.id): 2}  # fmt: skip


def test_a_failing_step_changes_no_state(ad32):
    model = Two(a=LinearConfig(2, 3).init(ad32), b=LinearConfig(3, 1).init(ad32))
    optim = AdamConfig().init()
    x = Tensor.ones([4, 2], ad32)
    model = optim.step(
        0.1, model, GradientsParams.from_grads(model.forward(x).sum().backward(), model)
    )
    record = optim.to_record()
    # A record whose state for b.weight has the wrong shape: the step must raise, name the
    # parameter, and leave every state (a's included, which come first) as it was.
    bad = dict(record)
    wid = str(model.b.weight.id)
    mom = dict(bad[wid]["momentum"])
    mom["moment_1"] = TensorData(np.zeros((5, 5), np.float32))
    bad[wid] = {"momentum": mom}
    optim.load_record(bad)
    before = {k: v["momentum"]["time"] for k, v in optim.to_record().items()}
    grads = GradientsParams.from_grads(model.forward(x).sum().backward(), model)
    with pytest.raises(Exception) as info:
        optim.step(0.1, model, grads)
    assert any(wid in n and "load_record" in n for n in getattr(info.value, "__notes__", []))
    after = optim.to_record()
    assert {k: v["momentum"]["time"] for k, v in after.items()} == before
    np.testing.assert_array_equal(after[wid]["momentum"]["moment_1"].array, np.zeros((5, 5)))


def test_a_shared_parameter_gets_one_update_everywhere(ad32):
    lin = LinearConfig(2, 2).init(ad32)
    model = Two(a=lin, b=lin)  # the same Params twice
    loss = model.forward(Tensor.ones([3, 2], ad32)).sum()
    grads = GradientsParams.from_grads(loss.backward(), model)
    new = AdamConfig().init().step(0.1, model, grads)
    assert new.a.weight is new.b.weight and new.a.bias is new.b.bias
    assert not np.array_equal(new.a.weight.val().numpy(), lin.weight.val().numpy())


def test_custom_rule_without_step_many_runs_per_parameter(ad32):
    calls = []

    class Halve(SimpleOptimizer):
        def step(self, lr, tensor, grad, state):
            calls.append(tuple(tensor.dims()))
            return tensor * 0.5, None

    from burn_optim import OptimizerAdaptor

    model = LinearConfig(3, 2).init(ad32)
    grads = GradientsParams.from_grads(
        model.forward(Tensor.ones([1, 3], ad32)).sum().backward(), model
    )
    new = OptimizerAdaptor(Halve()).step(1.0, model, grads)
    assert calls == [(3, 2), (2,)]
    np.testing.assert_array_equal(new.weight.val().numpy(), model.weight.val().numpy() * 0.5)
