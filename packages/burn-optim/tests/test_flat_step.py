"""The optimizer's flat module pass (issue 35): `from_grads` and `optim.step` list a module's
parameters and rebuild it with `burn_nn.module.params_of` / `replace_params` instead of the
visitor walk. Results are bitwise those of the visitor path (a module class that overrides
`visit`/`map` takes it), structures with lists, dicts, tuples, optional and frozen fields come
back intact, a structure changed between steps is seen, and the pass costs few Python calls."""

import cProfile
import pstats

import numpy as np
import pytest
from burn_nn import LinearConfig, Module, Param
from burn_nn.module import params_of, replace_params
from burn_optim import AdamConfig, GradientsParams, SgdConfig
from burn_tensor import Tensor


class Net(Module):
    """Lists, dicts, tuples, an optional module, a plain tensor and constants side by side."""

    layers: list
    heads: dict
    pair: tuple
    extra: Module | None = None
    scale: Tensor | None = None
    sizes: tuple = (2, 3)
    name: str = "net"

    def forward(self, x):
        for layer in (la for la in self.layers if la is not None):
            x = layer.forward(x).tanh()
        out = self.heads["a"].forward(x) + self.heads["b"].forward(x)
        out = out + self.pair[0].forward(x) * self.pair[1].val().sum().unsqueeze()
        if self.extra is not None:
            out = out + self.extra.forward(x)
        return out


class VisitorNet(Net):
    """The same module through the visitor path: `visit`/`map` overridden (delegating)."""

    def visit(self, visitor):
        return super().visit(visitor)

    def map(self, mapper):
        return super().map(mapper)


def _net(cls, device, extra=False):
    device.seed(3)
    lin = lambda i, o: LinearConfig(i, o).init(device)  # noqa: E731
    w = Param.from_tensor(Tensor.from_data(np.linspace(0.5, 1, 4).reshape(2, 2), device))
    return cls(
        layers=[lin(4, 4), None, lin(4, 4)],
        heads={"a": lin(4, 2), "b": lin(4, 2)},
        pair=(lin(4, 2), w),
        extra=lin(4, 2) if extra else None,
        scale=Tensor.ones([2], device),
    )


def _loss(model, device, step):
    x = Tensor.from_data(np.random.default_rng(step).uniform(-1, 1, (5, 4)), device)
    return (model.forward(x) ** 2).sum()


def _train(model, optim, device, steps=3):
    for s in range(steps):
        grads = GradientsParams.from_grads(_loss(model, device, s).backward(), model)
        model = optim.step(1e-2, model, grads)
        assert len(grads) == 0  # every gradient consumed, as Burn's step does
    return model


def _values(model):
    return {str(p.id): p.val().numpy() for p in model.parameters()}


def _state(optim):
    rec = optim.to_record()
    out = {}
    for pid, st in rec.items():
        m = st["momentum"]
        out[pid] = (m["time"], m["moment_1"].numpy(), m["moment_2"].numpy())
    return out


@pytest.mark.parametrize("make", [AdamConfig, SgdConfig])
def test_flat_step_is_bitwise_the_visitor_path(ad32, make):
    flat = _net(Net, ad32, extra=True)
    slow = VisitorNet(**{k: v for k, v in vars(flat).items()})  # the same Params (values)
    of, os_ = make().init(), make().init()
    flat, slow = _train(flat, of, ad32), _train(slow, os_, ad32)
    vf, vs = _values(flat), _values(slow)
    for k in vf:
        np.testing.assert_array_equal(vf[k], vs[k])
    if make is AdamConfig:
        sf, ss = _state(of), _state(os_)
        assert sf.keys() == ss.keys() == vf.keys()
        for k in sf:
            assert sf[k][0] == ss[k][0] == 3
            np.testing.assert_array_equal(sf[k][1], ss[k][1])
            np.testing.assert_array_equal(sf[k][2], ss[k][2])


def test_flat_step_matches_numpy_adam(ad64):
    """The updated values are Adam's, computed independently in float64 numpy."""
    model = _net(Net, ad64)
    w0 = {str(p.id): p.val().numpy().astype(np.float64) for p in model.parameters()}
    optim = AdamConfig().init()
    grads = GradientsParams.from_grads(_loss(model, ad64, 0).backward(), model)
    g = {str(pid): t.numpy() for pid, t in grads.items()}
    new = optim.step(1e-2, model, grads)
    b1, b2, eps, lr = 0.9, 0.999, 1e-5, 1e-2
    for p in new.parameters():
        k = str(p.id)
        m, v = (1 - b1) * g[k], (1 - b2) * g[k] ** 2
        s = np.sqrt(1 - b2)
        want = w0[k] - lr * (m * s / (1 - b1)) / (np.sqrt(v) + eps * s)
        np.testing.assert_allclose(p.val().numpy(), want, rtol=1e-12, atol=1e-14)


def test_structure_and_ids_survive_the_flat_rebuild(ad32):
    model = _net(Net, ad32)
    new = _train(model, AdamConfig().init(), ad32, steps=1)
    assert type(new) is Net and new is not model
    assert isinstance(new.layers, list) and new.layers[1] is None and len(new.layers) == 3
    assert isinstance(new.pair, tuple) and isinstance(new.heads, dict)
    assert list(new.heads) == ["a", "b"] and new.extra is None
    assert new.sizes == (2, 3) and new.name == "net" and new.scale is model.scale
    assert [str(p.id) for p in new.parameters()] == [str(p.id) for p in model.parameters()]
    # the old module is untouched (modules are values): its values are the initial ones
    before = _values(model)
    for k, v in _values(new).items():
        assert not np.array_equal(v, before[k]), k
        assert all(p.require_grad for p in new.parameters())


def test_frozen_params_are_skipped_and_their_gradients_consumed(ad32):
    model = _net(Net, ad32)
    model.heads["a"] = model.heads["a"].no_grad()
    frozen = {str(p.id) for p in model.heads["a"].parameters()}
    optim = AdamConfig().init()
    loss = _loss(model, ad32, 0)
    grads = GradientsParams.from_grads(loss.backward(), model)
    new = optim.step(1e-2, model, grads)
    assert len(grads) == 0
    before = _values(model)
    after = _values(new)
    for k in frozen:
        np.testing.assert_array_equal(after[k], before[k])
    assert frozen.isdisjoint(optim.to_record()) and len(optim.to_record()) == len(after) - 2


def test_a_structure_change_between_steps_is_seen(ad32):
    """The pass walks the module it is given each time: an optional field filled in, a list
    grown and another module given to the same optimizer are all updated."""
    optim = AdamConfig().init()
    model = _train(_net(Net, ad32), optim, ad32, steps=1)
    assert len(optim) == 11
    model.extra = LinearConfig(4, 2).init(ad32)
    model.layers.append(LinearConfig(4, 4).init(ad32))
    new = _train(model, optim, ad32, steps=1)
    assert len(optim) == 11 + 4
    for p in (new.extra.weight, new.layers[3].bias):
        assert str(p.id) in optim.to_record()
        assert not np.array_equal(p.val().numpy(), _values(model)[str(p.id)])
    other = LinearConfig(4, 3).init(ad32)
    grads = GradientsParams.from_grads(other.forward(Tensor.ones([2, 4], ad32)).sum().backward(), other)
    moved = optim.step(1e-2, other, grads)
    assert len(optim) == 15 + 2
    assert not np.array_equal(moved.weight.val().numpy(), other.weight.val().numpy())


def test_params_of_and_replace_params_follow_visit_and_map(ad32):
    model = _net(Net, ad32, extra=True)
    order = []
    model.visit(lambda pid, t: order.append(pid))
    assert [p.id for p in params_of(model)] == order
    doubled = replace_params(model, lambda p: p.map(lambda t: t * 2))
    mapped = model.map(type("M", (), {"map": lambda self, i, t: t * 2})())
    for a, b in zip(doubled.parameters(), mapped.parameters(), strict=True):
        assert a.id == b.id
        np.testing.assert_array_equal(a.val().numpy(), b.val().numpy())


def _calls(fn) -> int:
    """Python calls made by `fn` in burn-nn's and burn-optim's own code (the module passes and
    the step's bookkeeping; the tensor and backend calls belong to other packages)."""
    pr = cProfile.Profile()
    pr.enable()
    fn()
    pr.disable()
    stats = pstats.Stats(pr).stats
    return sum(v[1] for k, v in stats.items() if "burn_nn" in k[0] or "burn_optim" in k[0])


def test_the_step_costs_few_python_calls_per_parameter(ad32):
    """Issue 35's host cost: `from_grads` + `step` on a module of 16 Linears, counted in
    burn-nn's and burn-optim's Python calls (CPU time is too noisy on a shared machine). The
    visitor path made 58 per parameter, the flat pass 34."""
    lin = [LinearConfig(4, 4).init(ad32) for _ in range(16)]
    model = Net(layers=lin[:12], heads={"a": lin[12], "b": lin[13]}, pair=(lin[14], lin[15].weight))
    optim = AdamConfig().init()
    model = _train(model, optim, ad32, steps=1)
    grads = _loss(model, ad32, 1).backward()

    def step():
        optim.step(1e-2, model, GradientsParams.from_grads(grads, model))

    per_param = _calls(step) / len(model.parameters())
    print(f"{per_param:.1f} Python calls per parameter")
    assert per_param < 45, per_param


def test_adam_update_many_still_names_a_bad_parameter(ad32):
    """The list-wide fast check (`_plain_many`) sends anything unusual to the per-parameter
    checks, which name the parameter and what is wrong."""
    from burn_tensor import TensorCheckError
    from burn_tensor.ops import adam_update_many

    dev = ad32.inner()
    ps = [Tensor.ones([2], dev), Tensor.ones([3], dev), Tensor.ones([1], dev)]
    gs = [Tensor.ones([2], dev), Tensor.ones([3], dev), Tensor.ones([4], dev)]
    kw = dict(lr=0.1, beta_1=0.9, beta_2=0.999, epsilon=1e-8)
    with pytest.raises(TensorCheckError, match=r"parameter 2: grad has shape \[4\], param \[1\]"):
        adam_update_many(ps, gs, None, None, time=1, **kw)
    m = [Tensor.ones([2], dev), Tensor.ones([3], dev), Tensor.ones([1], dev)]
    bad = [m[0], m[1], Tensor.ones([1], dev).int()]
    with pytest.raises(TensorCheckError, match=r"parameter 2: moment_2 is Int"):
        adam_update_many(ps, gs[:2] + [Tensor.ones([1], dev)], m, bad, time=2, **kw)
    with pytest.raises(TensorCheckError, match="time must be an int >= 1"):
        adam_update_many(ps, gs[:2] + [Tensor.ones([1], dev)], m, m, time=0, **kw)
    new, m1, m2 = adam_update_many(ps, gs[:2] + [Tensor.ones([1], dev)], m, m, time=2, **kw)
    assert [t.dims() for t in new] == [[2], [3], [1]]
