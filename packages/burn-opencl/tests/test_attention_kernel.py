"""OpenCl's attention through burn_gpu's flash kernels (`OpenClAttentionOps`), end to end from
`burn_tensor.module.attention` on `Autodiff(OpenCl())`: the kernels run (forward once, the
fused backward once, never the decomposition), Autodiff hands the backward the forward's saved
statistic, and the values match numpy float64 for sequences off the tiles, causal, broadcast
masks, head dims 16/64 and non-contiguous inputs (head dim 128 and a value dim other than
the head dim: burn-gpu's `tests/test_attention.py`, on the same kernels; the renderings here
are the ones it builds, so PoCL compiles each once)."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_opencl import OpenCl
from burn_opencl._attention import OpenClAttentionOps
from burn_tensor import Tensor, module
from burn_tensor._ops_attention import AttentionOps


def reference(q, k, v, mask, causal, scale, g, z=None):
    """(out, dq, dk, dv) in float64 (masked = left out; a fully masked row gives 0); `z` the
    dropout's keep / (1 - p) on the weights, or None."""
    s = np.einsum("bhid,bhjd->bhij", q, k) * scale
    sq, sk = s.shape[2], s.shape[3]
    hidden = np.zeros(s.shape, bool)
    if mask is not None:
        hidden |= np.broadcast_to(mask, s.shape)
    if causal:
        hidden |= np.arange(sk)[None, :] > np.arange(sq)[:, None] + (sk - sq)
    s = np.where(hidden, -np.inf, s)
    top = s.max(-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
    tot = e.sum(-1, keepdims=True)
    p = e / np.where(tot > 0, tot, 1.0)
    z = np.ones(p.shape) if z is None else z
    dp = (g @ np.swapaxes(v, 2, 3)) * z
    ds = p * (dp - (dp * p).sum(-1, keepdims=True)) * scale
    return (p * z) @ v, ds @ k, np.swapaxes(ds, 2, 3) @ q, np.swapaxes(p * z, 2, 3) @ g


#: the device type (`BURN_OPENCL_TEST_DEVICE_TYPE=gpu` on the GPU machine, as the suite)
DEVICE_TYPE = os.environ.get("BURN_OPENCL_TEST_DEVICE_TYPE", "cpu")


@pytest.fixture(scope="module")
def backend():
    try:
        return Autodiff(OpenCl(device_type=DEVICE_TYPE))
    except Exception as exc:  # noqa: BLE001 - no OpenCL CPU device here
        pytest.skip(f"no OpenCL CPU device: {exc}")


@pytest.fixture
def calls(monkeypatch):
    """Counts of the kernel paths; the decomposition raises if anything reaches it."""
    seen = {"fwd": 0, "bwd": 0}
    fwd, bwd = OpenClAttentionOps._attention_fwd, OpenClAttentionOps._attention_bwd

    def count_fwd(self, *a):
        seen["fwd"] += 1
        return fwd(self, *a)

    def count_bwd(self, *a):
        seen["bwd"] += 1
        return bwd(self, *a)

    def no_decomposition(*a):
        raise AssertionError("the default decomposition ran")

    monkeypatch.setattr(OpenClAttentionOps, "_attention_fwd", count_fwd)
    monkeypatch.setattr(OpenClAttentionOps, "_attention_bwd", count_bwd)
    monkeypatch.setattr(AttentionOps, "_attention_probs", no_decomposition)
    return seen


def _run(B, q, k, v, g, mask=None, causal=False, scale=None, view=None, dropout=0.0):
    dev = B.device()
    dev.seed(21)
    ts = [Tensor.from_data(a, dev) for a in (q, k, v)]
    if view is not None:
        ts = [view(t) for t in ts]
    ts = [t.require_grad() for t in ts]
    m = None if mask is None else Tensor.from_data(mask, dev)
    out = module.attention(*ts, mask=m, causal=causal, scale=scale, dropout=dropout)
    grads = (out * Tensor.from_data(g, dev)).sum().backward()
    return [out.into_data().array] + [t.grad(grads).into_data().array for t in ts]


CASES = [
    # (b, h, sq, sk, d, dv, causal, mask shape)
    (2, 2, 70, 70, 16, 16, True, None),
    (1, 3, 33, 97, 64, 64, False, (1, 1, 1, 97)),
    (2, 1, 41, 41, 16, 16, True, (2, 1, 41, 41)),
]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_forward_and_fused_backward_match_float64(backend, calls, case):
    b, h, sq, sk, d, dv, causal, mshape = case
    rng = np.random.default_rng(sum(case[:6]))
    q, k = (rng.standard_normal((b, h, s, d)).astype(np.float32) for s in (sq, sk))
    v = rng.standard_normal((b, h, sk, dv)).astype(np.float32)
    g = rng.standard_normal((b, h, sq, dv)).astype(np.float32)
    mask = None if mshape is None else rng.uniform(size=mshape) < 0.3
    if mask is not None and mshape[2] > 1:
        mask[:, :, 0] = True  # query 0: every key masked -> zeros
    got = _run(backend, q, k, v, g, mask, causal)
    assert calls == {"fwd": 1, "bwd": 1}  # the backward used the forward's saved lse
    want = reference(*(a.astype(np.float64) for a in (q, k, v)), mask, causal, 1 / math.sqrt(d), g)
    for name, a, w in zip(("out", "dq", "dk", "dv"), got, want):
        np.testing.assert_allclose(a, w, rtol=3e-4, atol=3e-4, err_msg=name)


def test_swapped_views_are_read_in_place(backend, calls):
    """[b, s, h, d] tensors seen as [b, h, s, d] (a multi-head projection's layout)."""
    rng = np.random.default_rng(7)
    q, k, v, g = (rng.standard_normal((2, 45, 3, 16)).astype(np.float32) for _ in range(4))
    got = _run(backend, q, k, v, np.swapaxes(g, 1, 2), causal=True, view=lambda t: t.swap_dims(1, 2))
    want = reference(*(np.swapaxes(a, 1, 2).astype(np.float64) for a in (q, k, v)), None, True,
                     0.25, np.swapaxes(g, 1, 2))  # fmt: skip
    for a, w in zip(got, want):
        np.testing.assert_allclose(a, w, rtol=3e-4, atol=3e-4)


def test_head_dim_past_the_kernels_takes_the_decomposition(backend):
    rng = np.random.default_rng(8)
    q, k, v, g = (rng.standard_normal((1, 1, 5, 130)).astype(np.float32) for _ in range(4))
    got = _run(backend, q, k, v, g, scale=0.05)
    want = reference(*(a.astype(np.float64) for a in (q, k, v)), None, False, 0.05, g)
    for a, w in zip(got, want):
        np.testing.assert_allclose(a, w, rtol=3e-4, atol=3e-4)


def test_fusion_passes_the_kernels_and_the_saved_state_through(calls):
    """`Autodiff(Fusion(OpenCl()))`: Fusion forwards the extension ops to OpenCl, so the node
    keeps the lse and the fused backward runs (one forward, one backward)."""
    from burn_fusion import Fusion

    try:
        B = Autodiff(Fusion(OpenCl(device_type=DEVICE_TYPE)))
    except Exception as exc:  # noqa: BLE001 - no OpenCL CPU device here
        pytest.skip(f"no OpenCL CPU device: {exc}")
    rng = np.random.default_rng(9)
    q, k, v, g = (rng.standard_normal((1, 2, 37, 16)).astype(np.float32) for _ in range(4))
    got = _run(B, q, k, v, g, causal=True)
    assert calls == {"fwd": 1, "bwd": 1}
    want = reference(*(a.astype(np.float64) for a in (q, k, v)), None, True, 0.25, g)
    for a, w in zip(got, want):
        np.testing.assert_allclose(a, w, rtol=3e-4, atol=3e-4)


def test_the_switch_sends_calls_to_the_decomposition(backend, monkeypatch):
    """BURN_GPU_ATTENTION=0: no kernel runs, the decomposition gives the same values."""
    seen = []
    monkeypatch.setattr(OpenClAttentionOps, "_attention_fwd", lambda *a: seen.append(a))
    monkeypatch.setenv("BURN_GPU_ATTENTION", "0")
    rng = np.random.default_rng(10)
    q, k, v, g = (rng.standard_normal((1, 2, 9, 16)).astype(np.float32) for _ in range(4))
    got = _run(backend, q, k, v, g, causal=True)
    assert seen == []
    want = reference(*(a.astype(np.float64) for a in (q, k, v)), None, True, 0.25, g)
    for a, w in zip(got, want):
        np.testing.assert_allclose(a, w, rtol=3e-4, atol=3e-4)


def _keep_scale(B, p, shape):
    """keep / (1 - p) of the seed words `_run` draws (it seeds the device with 21)."""
    from burn_tensor.ops import attention_keep_mask as keep_mask, draw_attention_seed as draw_seed

    dev = B.device()
    dev.seed(21)
    return keep_mask(draw_seed(dev).numpy(), p, *shape) / (1 - p)


@pytest.mark.parametrize("fusion", [False, True])
def test_dropout_runs_in_the_kernels_forward_and_backward(backend, calls, fusion):
    """issue 36: module.attention(dropout=p) while training: one forward kernel, one fused
    backward (the node keeps the probability and the seed words), values as numpy float64
    with the op's keep mask; on Autodiff(Fusion(OpenCl())) too."""
    if fusion:
        from burn_fusion import Fusion

        backend = Autodiff(Fusion(OpenCl(device_type=DEVICE_TYPE)))
    rng = np.random.default_rng(11)
    b, h, s, d = 2, 2, 45, 16
    q, k, v, g = (rng.standard_normal((b, h, s, d)).astype(np.float32) for _ in range(4))
    mask = rng.uniform(size=(b, 1, 1, s)) < 0.2
    got = _run(backend, q, k, v, g, mask, True, dropout=0.2)
    assert calls == {"fwd": 1, "bwd": 1}
    z = _keep_scale(backend, 0.2, (b, h, s, s))
    want = reference(*(a.astype(np.float64) for a in (q, k, v)), mask, True, 0.25, g, z)
    for name, a, w in zip(("out", "dq", "dk", "dv"), got, want):
        np.testing.assert_allclose(a, w, rtol=3e-4, atol=3e-4, err_msg=name)


def test_dropout_past_the_kernels_takes_the_decomposition(backend):
    """A head dim the kernels do not take: the decomposition applies the same keep mask."""
    rng = np.random.default_rng(12)
    q, k, v, g = (rng.standard_normal((1, 2, 7, 130)).astype(np.float32) for _ in range(4))
    got = _run(backend, q, k, v, g, scale=0.05, dropout=0.5)
    z = _keep_scale(backend, 0.5, (1, 2, 7, 7))
    want = reference(*(a.astype(np.float64) for a in (q, k, v)), None, False, 0.05, g, z)
    for a, w in zip(got, want):
        np.testing.assert_allclose(a, w, rtol=3e-4, atol=3e-4)

