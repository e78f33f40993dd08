"""The issue's CI kernel counts (on PoCL here): a 10-op elementwise chain launches 1 kernel, the
second of two identical training steps compiles 0 kernels, custom GELU launches 1 kernel
forward. Counts come from `device.fusion_stats()`."""

from __future__ import annotations

import math

import numpy as np
from _fusion_testlib import inner_backend
from burn_autodiff import Autodiff
from burn_fusion import Fusion
from burn_tensor import Tensor


def _device():
    return Fusion(inner_backend()).device()


def _delta(device, before: dict) -> dict:
    after = device.fusion_stats()
    return {k: after[k] - before[k] for k in after}


def test_ten_op_chain_launches_one_kernel():
    device = _device()
    a = np.linspace(-2.0, 2.0, 4096, dtype=np.float32).reshape(64, 64)
    b = np.linspace(0.5, 1.5, 4096, dtype=np.float32).reshape(64, 64)
    x, y = Tensor.from_data(a, device), Tensor.from_data(b, device)
    device.sync()  # nothing left pending from earlier tests
    before = device.fusion_stats()
    z = ((x * y + 1.0).exp() / y - x).tanh().abs().sqrt() * 2.0 - 0.5
    got = z.numpy()
    d = _delta(device, before)
    assert d["ops_recorded"] == 10
    assert d["kernels_launched"] == 1, d
    ref = np.sqrt(np.abs(np.tanh(np.exp(a * b + 1.0) / b - a))) * 2.0 - 0.5
    np.testing.assert_allclose(got, ref, rtol=2e-5, atol=1e-6)


def custom_gelu(x: Tensor) -> Tensor:
    """Burn's custom_gelu bench: GELU from primitives."""
    return x * 0.5 * ((x / math.sqrt(2.0)).erf() + 1.0)


def test_custom_gelu_launches_one_kernel_forward():
    device = _device()
    a = np.linspace(-4.0, 4.0, 1 << 16, dtype=np.float32)
    x = Tensor.from_data(a, device)
    device.sync()  # nothing left pending from earlier tests
    before = device.fusion_stats()
    got = custom_gelu(x).numpy()
    d = _delta(device, before)
    assert (d["ops_recorded"], d["kernels_launched"]) == (5, 1), d
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(got, a * 0.5 * (1 + erf(a / math.sqrt(2.0))), atol=1e-6)


def _mlp_step(device, params, x, y, lr=0.05):
    """One SGD step of a 2-layer MLP with GELU and an MSE loss, from tensor ops."""
    w1, b1, w2, b2 = [p.require_grad() for p in params]
    h = custom_gelu(x.matmul(w1) + b1)
    out = h.matmul(w2) + b2
    loss = ((out - y) * (out - y)).mean()
    grads = loss.backward()
    new = [
        Tensor.from_inner(p.inner() - p.grad(grads) * lr, device).detach() for p in (w1, b1, w2, b2)
    ]
    return loss.into_scalar(), new


def test_second_training_step_compiles_nothing():
    device = Autodiff(Fusion(inner_backend())).device()
    rng = np.random.default_rng(0)
    x = Tensor.from_data(rng.standard_normal((32, 16)).astype(np.float32), device)
    y = Tensor.from_data(rng.standard_normal((32, 4)).astype(np.float32), device)
    params = [
        Tensor.from_data((rng.standard_normal(s) * 0.3).astype(np.float32), device)
        for s in ((16, 32), (1, 32), (32, 4), (1, 4))
    ]
    loss0, params = _mlp_step(device, params, x, y)
    device.sync()  # nothing left pending from earlier tests
    before = device.fusion_stats()
    loss1, params = _mlp_step(device, params, x, y)
    d = _delta(device, before)
    assert d["kernels_compiled"] == 0 and d["kernels_from_disk"] == 0, d
    fused = d["kernels_launched"] - d["plans_run_unfused"]
    assert fused > 0 and d["plan_cache_hits"] == fused, d
    assert loss1 < loss0
