"""`optim.step` semantics: ids, devices, require_grad, untouched and frozen parameters."""

import numpy as np
import pytest
from burn_nn import LinearConfig, Module
from burn_optim import (
    AdamConfig,
    GradientsAccumulator,
    GradientsParams,
    OptimizerAdaptor,
    SgdConfig,
    SimpleOptimizer,
)
from burn_tensor import Tensor


class Two(Module):
    a: Module
    b: Module

    def forward(self, x):
        return self.b.forward(self.a.forward(x))


def test_step_keeps_ids_and_autodiff(ad32):
    model = LinearConfig(3, 2).init(ad32)
    loss = model.forward(Tensor.ones([4, 3], ad32)).sum()
    grads = GradientsParams.from_grads(loss.backward(), model)
    assert len(grads) == 2 and grads.get(model.weight.id).device == ad32.inner()
    new = SgdConfig().init().step(0.1, model, grads)
    assert [p.id for p in new.parameters()] == [p.id for p in model.parameters()]
    for p in new.parameters():
        assert p.require_grad and p.val().is_require_grad() and p.val().device == ad32
    # SGD: w - lr * grad, and the new module trains again.
    np.testing.assert_allclose(new.bias.val().numpy(), model.bias.val().numpy() - 0.4, atol=1e-6)
    loss2 = new.forward(Tensor.ones([4, 3], ad32)).sum()
    assert GradientsParams.from_grads(loss2.backward(), new).len() == 2
    assert grads.is_empty()  # consumed


def test_params_without_grads_are_untouched(ad32):
    model = Two(a=LinearConfig(2, 2).init(ad32), b=LinearConfig(2, 1).init(ad32))
    loss = model.b.forward(Tensor.ones([1, 2], ad32)).sum()  # `a` takes no part
    grads = GradientsParams.from_grads(loss.backward(), model)
    optim = AdamConfig().init()
    new = optim.step(0.1, model, grads)
    assert new.a.weight is model.a.weight and new.a.bias is model.a.bias
    assert not np.array_equal(new.b.weight.val().numpy(), model.b.weight.val().numpy())
    assert set(optim.to_record()) == {str(model.b.weight.id), str(model.b.bias.id)}


def test_no_grad_params_are_skipped(ad32):
    model = Two(a=LinearConfig(2, 2).init(ad32).no_grad(), b=LinearConfig(2, 1).init(ad32))
    loss = model.forward(Tensor.ones([1, 2], ad32)).sum()
    grads = GradientsParams.from_grads(loss.backward(), model)
    assert grads.get(model.a.weight.id) is None and grads.len() == 2
    # Even a gradient registered by hand does not move a frozen parameter.
    grads.register(model.a.weight.id, Tensor.ones([2, 2], ad32.inner()))
    new = SgdConfig().init().step(1.0, model, grads)
    np.testing.assert_array_equal(new.a.weight.val().numpy(), model.a.weight.val().numpy())
    assert not new.a.weight.require_grad and new.b.weight.require_grad


def test_step_rejects_raw_gradients(ad32):
    model = LinearConfig(2, 1).init(ad32)
    raw = model.forward(Tensor.ones([1, 2], ad32)).sum().backward()
    with pytest.raises(TypeError, match="from_grads"):
        SgdConfig().init().step(0.1, model, raw)


def test_gradients_params_api(ad32):
    model = LinearConfig(2, 3).init(ad32)
    raw = model.forward(Tensor.ones([5, 2], ad32)).sum().backward()
    only_bias = GradientsParams.from_params(raw, model, [model.bias.id])
    assert only_bias.ids() == [model.bias.id]
    rest = GradientsParams.from_module(raw, model)
    assert rest.ids() == [model.weight.id]
    # str ids work as keys too.
    assert only_bias.get(str(model.bias.id)).tolist() == [5.0, 5.0, 5.0]
    assert str(model.bias.id) in only_bias and model.weight.id not in only_bias
    g = only_bias.remove(model.bias.id)
    assert only_bias.is_empty() and g is not None
    only_bias.register(model.bias.id, g * 2)
    assert only_bias.get(model.bias.id).tolist() == [10.0, 10.0, 10.0]
    moved = only_bias.to_device(ad32, model)
    assert moved.get(model.bias.id).device == ad32.inner()
    assert GradientsParams.new().len() == 0


def test_accumulator_sums(ad64):
    model = LinearConfig(2, 1).init(ad64)
    acc = GradientsAccumulator()
    xs = [[[1.0, 2.0]], [[3.0, -1.0]]]
    for x in xs:
        loss = model.forward(Tensor.from_data(x, ad64)).sum()
        acc.accumulate(model, GradientsParams.from_grads(loss.backward(), model))
    assert len(acc) == 2
    total = acc.grads()
    assert len(acc) == 0 and acc.grads().is_empty()
    np.testing.assert_allclose(total.get(model.weight.id).numpy(), [[4.0], [1.0]])
    np.testing.assert_allclose(total.get(model.bias.id).numpy(), [2.0])
    # The sum steps like one big batch.
    new = SgdConfig().init().step(0.5, model, total)
    np.testing.assert_allclose(new.bias.val().numpy(), model.bias.val().numpy() - 1.0)


def test_custom_simple_optimizer(ad64):
    class SignSgd(SimpleOptimizer):
        def step(self, lr, tensor, grad, state):
            return tensor - grad.sign() * lr, {"n": (state or {"n": 0})["n"] + 1}

    model = LinearConfig(2, 1).init(ad64)
    optim = OptimizerAdaptor(SignSgd())
    for _ in range(3):
        loss = model.forward(Tensor.ones([1, 2], ad64)).sum()
        model = optim.step(0.25, model, GradientsParams.from_grads(loss.backward(), model))
    assert optim.to_record()[str(model.bias.id)] == {"n": 3}
    assert len(optim) == 2 and "SignSgd" in repr(optim)


def test_state_follows_param_to_new_device_and_dtype(ad32):
    """States loaded from a record are rebuilt on the gradient's device, in the param's dtype."""
    model = LinearConfig(2, 1).init(ad32)
    optim = AdamConfig().init()
    for _ in range(2):
        loss = model.forward(Tensor.ones([1, 2], ad32)).sum()
        model = optim.step(0.1, model, GradientsParams.from_grads(loss.backward(), model))
    record = optim.to_record()
    half = {
        k: {
            "momentum": {
                n: (v.convert("float16") if hasattr(v, "convert") else v)
                for n, v in s["momentum"].items()
            }
        }
        for k, s in record.items()
    }
    other = AdamConfig().init().load_record(half)
    loss = model.forward(Tensor.ones([1, 2], ad32)).sum()
    other.step(0.1, model, GradientsParams.from_grads(loss.backward(), model))
    state = other._records[model.bias.id]["momentum"]
    assert state["time"] == 3 and state["moment_1"].dtype == model.bias.val().dtype


def test_failed_step_keeps_state_and_names_the_parameter(ad32):
    """A record from another model fails at the step, loses no state and says which param."""
    model = LinearConfig(3, 2).init(ad32)
    other = LinearConfig(4, 2).init(ad32)
    donor = AdamConfig().init()
    loss = other.forward(Tensor.ones([1, 4], ad32)).sum()
    donor.step(0.1, other, GradientsParams.from_grads(loss.backward(), other))
    rec = donor.to_record()
    bad = {
        str(model.weight.id): rec[str(other.weight.id)],
        str(model.bias.id): rec[str(other.bias.id)],
    }
    optim = AdamConfig().init().load_record(bad)
    loss = model.forward(Tensor.ones([1, 3], ad32)).sum()
    with pytest.raises(Exception) as info:
        optim.step(0.1, model, GradientsParams.from_grads(loss.backward(), model))
    assert str(model.weight.id) in "".join(getattr(info.value, "__notes__", []))
    assert set(optim.to_record()) == set(bad)  # nothing popped by the failed step
