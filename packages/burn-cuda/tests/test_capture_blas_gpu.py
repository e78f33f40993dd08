"""cuBLAS inside a captured step's CUDA graph (`_capture_blas.py`): a captured training step of
Linear layers, a batched matmul with a broadcast batch and a conv2d replays its GEMMs as graph
nodes (no graph split around them) and gives the eager step's parameters bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_cuda import Cuda
from burn_fusion import Fusion, capture
from burn_nn import Conv2dConfig, Linear, LinearConfig, Module
from burn_nn.loss import CrossEntropyLossConfig
from burn_optim import AdamConfig, GradientsParams
from burn_tensor import Tensor
from burn_tensor.activation import relu

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_ready")]

#: the ops that call cuBLAS; none may split a recording's graph now
GEMM_OPS = {"float_matmul", "linear", "linear_x_backward", "linear_weight_backward",
            "linear_bias_backward", "conv2d", "conv2d_x_backward", "conv2d_weight_backward",
            "conv2d_bias_backward"}  # fmt: skip


class Net(Module):
    conv: object
    l1: Linear
    l2: Linear

    def forward(self, img, x):
        n = x.dims()[0]
        c = relu(self.conv.forward(img)).mean_dim(3).mean_dim(2).reshape([n, 4])
        h = relu(self.l1.forward(x))
        # a batched matmul with a partial batch broadcast ([2, 1, 16, 16] @ [2, n/2, 16, 1]):
        # `_gemm.matmul` leaves it, `matmul_dense` copies both sides first
        w = self.l1.weight.val().reshape([1, 1, 16, 16])
        w = Tensor.cat([w, w.mul_scalar(0.5)], 0)
        h = w.matmul(h.reshape([2, n // 2, 16, 1])).reshape([n, 16])
        return self.l2.forward(h) + c.matmul(Tensor.ones([4, 4], c.device))


def _run(step, dev, steps):
    dev.seed(3)
    model = Net(
        conv=Conv2dConfig([3, 4], [3, 3]).init(dev),
        l1=LinearConfig(16, 16).init(dev),
        l2=LinearConfig(16, 4).init(dev),
    )
    optim = AdamConfig().init()
    rng = np.random.default_rng(0)
    out = []
    for i in range(steps):
        img = Tensor.from_data(rng.normal(size=(8, 3, 6, 6)).astype(np.float32), dev)
        x = Tensor.from_data(rng.normal(size=(8, 16)).astype(np.float32), dev)
        y = Tensor.from_data(rng.integers(0, 4, size=(8,)), dev)
        model = step(model, optim, img, x, y, 1e-2 * (1 + 0.1 * i))
        out.append([p.val().numpy() for _, p in model.named_parameters()])
    return out


def train_step(model, optim, img, x, y, lr):
    dev = x.device
    loss = CrossEntropyLossConfig().init(dev).forward(model.forward(img, x), y)
    grads = GradientsParams.from_grads(loss.backward(), model)
    return optim.step(lr, model, grads)


def test_captured_gemms_are_graph_nodes_and_bitwise_equal_to_eager():
    dev = Autodiff(Fusion(Cuda())).device()
    eager = _run(train_step, dev, 7)
    step = capture(train_step)
    captured = _run(step, dev, 7)
    s = step.stats()
    assert s["replays"] >= 2 and s["eager_reasons"] == [], s
    for i, (a, b) in enumerate(zip(eager, captured, strict=True)):
        for j, (p, q) in enumerate(zip(a, b, strict=True)):
            assert p.tobytes() == q.tobytes(), f"step {i}, parameter {j} differs"
    # the fresh optimizer's first call is a structure of its own (eager); the other replays
    (guard,) = [g for g in step._guards.values() if g.state == "replay"]
    names = [c["name"] for c in guard.last.calls]
    assert not GEMM_OPS & set(names), names  # only Adam (and random draws) run between graphs
    assert names == ["float_adam_update_many"] or set(names) <= {
        "float_adam_update_many", "float_adam_update", "float_random", "int_random"}, names
