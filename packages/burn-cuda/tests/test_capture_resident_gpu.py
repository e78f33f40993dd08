"""A captured training step on the real `CudaTape` is ONE CUDA graph: dropout's random draw and
Adam's update run inside it (`_capture_resident`), their per-call values written into the
tape's device block before each replay; every step's parameters equal the eager
`Autodiff(Fusion(Cuda()))` step's bit for bit, in float32 and bfloat16, with a learning rate
that changes every call. `BURN_CUDA_CAPTURE_RESIDENT=0` gives the split graph, same bits."""

from __future__ import annotations

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_cuda import Cuda
from burn_fusion import Fusion, capture
from burn_nn import DropoutConfig, Linear, LinearConfig, Module
from burn_nn.loss import CrossEntropyLossConfig
from burn_optim import AdamConfig, GradientsParams
from burn_tensor import Distribution, Tensor
from burn_tensor.activation import relu

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_ready")]

STEPS = 7  # 1: fresh optimizer (eager), 2: warm-up, 3, 4: recordings, 5-7: replays


class Net(Module):
    l1: Linear
    drop: object
    l2: Linear

    def forward(self, x):
        return self.l2.forward(self.drop.forward(relu(self.l1.forward(x))))


def train_step(model, optim, x, y, lr):
    loss = CrossEntropyLossConfig().init(x.device).forward(model.forward(x), y)
    grads = GradientsParams.from_grads(loss.backward(), model)
    return optim.step(lr, model, grads), loss


def _run(step, dev):
    dev.seed(7)
    model = Net(
        l1=LinearConfig(64, 256).init(dev),
        drop=DropoutConfig(0.3).init(),
        l2=LinearConfig(256, 10).init(dev),
    )
    optim = AdamConfig().init()
    rng = np.random.default_rng(0)
    out = []
    for i in range(STEPS):
        x = Tensor.from_data(rng.normal(size=(128, 64)).astype(np.float32), dev)
        y = Tensor.from_data(rng.integers(0, 10, size=(128,)), dev)
        model, loss = step(model, optim, x, y, 1e-3 * (1 + 0.1 * i))
        out.append([p.val().numpy().tobytes() for _, p in model.named_parameters()])
        out[-1].append(loss.numpy().tobytes())
    out.append(Tensor.random([256], Distribution.default(), dev).numpy().tobytes())
    return out


def _replaying(step):
    (guard,) = [g for g in step._guards.values() if g.state == "replay"]
    return guard.last


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_captured_step_is_one_graph_with_the_eager_bits(dtype):
    dev = Autodiff(Fusion(Cuda(float_dtype=dtype))).device()
    eager = _run(train_step, dev)
    step = capture(train_step)
    got = _run(step, dev)
    s = step.stats()
    assert s["replays"] == 3 and s["eager_reasons"] == [], s
    for i, (a, b) in enumerate(zip(eager, got, strict=True)):
        assert a == b, f"step {i} differs (the last entry: the device's next draw)"
    rec = _replaying(step)
    assert [k for k, _ in rec.tape.segments] == ["G"], rec.tape.segments
    assert rec.calls == [] and len(rec.resident_calls) >= 2, rec.resident_calls
    assert s["tape"] == {"segments": 1, "graphs": 1, "resident_calls": len(rec.resident_calls)}
    step.release()


def test_the_split_graph_gives_the_same_bits(monkeypatch):
    monkeypatch.setenv("BURN_CUDA_CAPTURE_RESIDENT", "0")
    dev = Autodiff(Fusion(Cuda())).device()
    eager = _run(train_step, dev)
    step = capture(train_step)
    got = _run(step, dev)
    assert got == eager
    rec = _replaying(step)
    assert "D" in [k for k, _ in rec.tape.segments] and rec.resident_calls == []
    step.release()
