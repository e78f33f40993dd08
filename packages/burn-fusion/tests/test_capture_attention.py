"""Step capture of a training step whose attention drops weights inside the fused op (issue 36):
the op's seed words are a random draw (a dynamic op of `_capture_hooks`), so each replay draws
new words and the recorded attention kernels read them from device memory. Captured steps
equal the eager ones bit for bit (eager draws new words every step, so equal parameters mean
every replay dropped a new mask), on PoCL and under the CUDA-graph rules' tape. And issue 36's
definition of done: a training MultiHeadAttention with dropout runs the inner backend's fused
forward kernel once and its fused backward once, never the composition."""

from __future__ import annotations

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_fusion import Fusion, capture
from burn_nn import Linear, LinearConfig, Module
from burn_nn.attention import MhaInput, MultiHeadAttention, MultiHeadAttentionConfig
from _fusion_testlib import INNER, inner_backend
from burn_optim import AdamConfig, GradientsParams
from burn_tensor import Tensor

try:
    B = Autodiff(Fusion(inner_backend()))
except pytest.skip.Exception as exc:
    pytest.skip(str(exc), allow_module_level=True)
DEV = B.device()


class AttnNet(Module):
    mha: MultiHeadAttention
    head: Linear

    def forward(self, x):
        return self.head.forward(self.mha.forward(MhaInput.self_attn(x)).context)


def _run(step, n=6):
    DEV.seed(3)
    model = AttnNet(
        mha=MultiHeadAttentionConfig(16, 2, dropout=0.4).init(DEV), head=LinearConfig(16, 1).init(DEV)
    )
    optim = AdamConfig().init()
    out = []
    for i in range(n):
        x = Tensor.from_data(np.random.default_rng(i).normal(size=(2, 9, 16)).astype(np.float32), DEV)
        model, loss = step(model, optim, x, 1e-2)
        out.append((loss.into_scalar(), [p.val().numpy().tobytes() for _, p in model.named_parameters()]))
    return out


def train_step(model, optim, x, lr):
    loss = model.forward(x).square().mean()
    grads = GradientsParams.from_grads(loss.backward(), model)
    return optim.step(lr, model, grads), loss


def _check(monkeypatch):
    from burn_tensor import module as F

    drops = []
    orig = F.attention
    monkeypatch.setattr(F, "attention", lambda *a, **kw: drops.append(kw["dropout"]) or orig(*a, **kw))
    eager = _run(train_step)
    assert drops == [0.4] * 6  # the fused op dropped the weights (no composed dropout)
    step = capture(train_step)
    captured = _run(step)
    assert [e[0] for e in eager] == [c[0] for c in captured]
    for i, (e, c) in enumerate(zip(eager, captured)):
        assert e[1] == c[1], f"step {i}: parameters differ"
    s = step.stats()
    assert s["replays"] >= 2 and s["eager_reasons"] == [], s
    step.release()


def test_captured_attention_dropout_draws_new_words_each_replay(monkeypatch):
    _check(monkeypatch)


def test_captured_attention_dropout_under_cuda_rules(monkeypatch):
    if INNER == "opencl":
        from _capture_cuda_rules import CudaRulesTape
        from burn_opencl._gpu_runtime import OpenClRuntime

        monkeypatch.setattr(OpenClRuntime, "tape", lambda self: CudaRulesTape(self.rt))
    _check(monkeypatch)


def test_training_attention_with_dropout_runs_one_fused_forward_and_backward(monkeypatch):
    from burn_tensor._ops_attention import AttentionOps

    inner = type(inner_backend())
    seen = {"fwd": 0, "bwd": 0}
    fwd, bwd = inner._attention_fwd, inner._attention_bwd

    def count(key, fn):
        def op(self, *a):
            seen[key] += 1
            return fn(self, *a)

        return op

    def no_decomposition(*a):
        raise AssertionError("the default decomposition ran")

    monkeypatch.setattr(inner, "_attention_fwd", count("fwd", fwd))
    monkeypatch.setattr(inner, "_attention_bwd", count("bwd", bwd))
    monkeypatch.setattr(AttentionOps, "_attention_probs", no_decomposition)
    for dev in (Autodiff(inner_backend()).device(), DEV):  # the inner backend, and under Fusion
        m = MultiHeadAttentionConfig(16, 2, dropout=0.1).init(dev)
        x = Tensor.from_data(np.random.default_rng(13).normal(size=(2, 9, 16)).astype(np.float32), dev)
        x = x.require_grad()
        grads = m.forward(MhaInput.self_attn(x)).context.sum().backward()
        assert np.isfinite(x.grad(grads).numpy()).all()
        assert seen == {"fwd": 1, "bwd": 1}, seen
        seen.update(fwd=0, bwd=0)
