"""Gradients reach every parameter on Autodiff(NdArray()); the custom-training-loop style works."""

import numpy as np
from burn_tensor import Tensor

import burn_nn as nn
from burn_nn import Module, Param, PaddingConfig2d


def assert_all_grads(model, loss):
    grads = loss.backward()
    missing = [
        n for n, p in model.named_parameters() if p.require_grad and p.val().grad(grads) is None
    ]
    assert not missing, missing
    return grads


def test_params_created_with_require_grad(autodiff):
    lin = nn.LinearConfig(3, 2).init(autodiff)
    assert lin.weight.val().is_require_grad()
    assert not lin.no_grad().weight.val().is_require_grad()
    assert not lin.valid().weight.val().device.backend.is_autodiff


def test_custom_module_with_tensor_params(autodiff):
    class Affine(Module):
        w: Param
        b: Param

        def forward(self, x):
            return x.matmul(self.w.val()).add(self.b.val().unsqueeze(2))

    d = autodiff
    model = Affine(
        w=Param.from_tensor(Tensor.ones([3, 2], d)), b=Param.from_tensor(Tensor.zeros([2], d))
    )
    x = Tensor.from_data(np.arange(6.0).reshape(2, 3), d)
    loss = model.forward(x).sum()
    grads = loss.backward()
    np.testing.assert_allclose(
        model.w.val().grad(grads).numpy(), np.tile(np.array([[3.0], [5.0], [7.0]]), 2)
    )
    np.testing.assert_allclose(model.b.val().grad(grads).numpy(), [2.0, 2.0])
    # an "optimizer step" keeps ids
    stepped = model.map(
        type(
            "Sgd",
            (nn.ModuleMapper,),
            {"map_float": lambda self, p: p.map(lambda t: t.inner() - 0.1 * t.grad(grads))},
        )()
    )
    assert [p.id for p in stepped.parameters()] == [p.id for p in model.parameters()]


def test_grads_reach_every_layer(autodiff, rng):
    d = autodiff
    x4 = Tensor.from_data(rng.normal(size=(2, 2, 6, 6)), d)
    x3 = Tensor.from_data(rng.normal(size=(2, 2, 6)), d)
    cases = [
        (nn.Conv2dConfig([2, 3], [3, 3], padding=PaddingConfig2d.Same).init(d), x4),
        (nn.Conv1dConfig(2, 3, 3).init(d), x3),
        (nn.ConvTranspose2dConfig([2, 3], [2, 2]).init(d), x4),
        (nn.ConvTranspose1dConfig([2, 3], 2).init(d), x3),
        (nn.BatchNormConfig(2).init(d), x4),
        (nn.LayerNormConfig(6).init(d), x4),
        (nn.GroupNormConfig(2, 2).init(d), x4),
        (nn.InstanceNormConfig(2).init(d), x3),
        (nn.RmsNormConfig(6).init(d), x3),
        (nn.PReluConfig(num_parameters=2).init(d), x3),
        (nn.SwiGluConfig(6, 4, bias=True).init(d), x3),
        (nn.LinearConfig(6, 4).init(d), x3),
    ]
    for module, x in cases:
        out = module.forward(x)
        assert_all_grads(module, out.mul(out).sum())
    emb = nn.EmbeddingConfig(5, 3).init(d)
    assert_all_grads(emb, emb.forward(Tensor.from_ints([[1, 2]], d)).sum())
