"""Cuda's flash attention on the GPU (skips without one): `module.attention` forward + backward
on `Autodiff(Cuda())` through burn_gpu's kernels (one forward, one fused backward, never the
decomposition), float32 at the issue's head dim and at 128, a broadcast mask, causal with
seq_q < seq_k, and bfloat16 storage, against numpy float64. The CPU stand-in runs the same
kernel text in test_attention_cpu.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_cuda._attention import CudaAttentionOps
from burn_tensor import Tensor, module
from burn_tensor._ops_attention import AttentionOps

pytestmark = pytest.mark.gpu


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


@pytest.fixture
def calls(monkeypatch):
    seen = {"fwd": 0, "bwd": 0}
    fwd, bwd = CudaAttentionOps._attention_fwd, CudaAttentionOps._attention_bwd

    def count_fwd(self, *a):
        seen["fwd"] += 1
        return fwd(self, *a)

    def count_bwd(self, *a):
        seen["bwd"] += 1
        return bwd(self, *a)

    def no_decomposition(*a):
        raise AssertionError("the default decomposition ran")

    monkeypatch.setattr(CudaAttentionOps, "_attention_fwd", count_fwd)
    monkeypatch.setattr(CudaAttentionOps, "_attention_bwd", count_bwd)
    monkeypatch.setattr(AttentionOps, "_attention_probs", no_decomposition)
    return seen


CASES = [
    # (b, h, sq, sk, d, dv, causal, mask shape, dtype)
    (2, 4, 300, 300, 64, 64, True, None, "float32"),  # tiled kernels
    (2, 2, 100, 257, 64, 64, False, (2, 1, 1, 257), "float32"),
    (1, 2, 90, 130, 128, 128, True, (1, 2, 90, 130), "float32"),  # row kernels, dK/dV split
    (2, 4, 200, 200, 64, 64, True, None, "bfloat16"),
]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_flash_attention_matches_float64(cuda_ready, calls, case):
    from burn_cuda import Cuda

    check(Autodiff(Cuda()), case)
    assert calls == {"fwd": 1, "bwd": 1}


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_flash_attention_dropout_matches_float64(cuda_ready, calls, case):
    """issue 36: dropout 0.2 on the weights inside the kernels (forward and backward), against
    numpy float64 with the op's keep mask; still one forward and one fused backward."""
    from burn_cuda import Cuda

    check(Autodiff(Cuda()), case, dropout=0.2)
    assert calls == {"fwd": 1, "bwd": 1}


def check(B, case, dropout=0.0):
    """Forward + backward of `case` on Autodiff backend `B` against float64 (with `dropout`:
    the keep mask of the seed words the op draws after `device.seed(17)`)."""
    from burn_tensor.ops import attention_keep_mask as keep_mask, draw_attention_seed as draw_seed

    b, h, sq, sk, d, dv, causal, mshape, dtype = case
    dev = B.device()
    dev.seed(17)
    z = keep_mask(draw_seed(dev).numpy(), dropout, b, h, sq, sk) / (1 - dropout) if dropout else None
    dev.seed(17)
    rng = np.random.default_rng(sq + sk + d)
    arrays = [
        rng.standard_normal(s).astype(np.float32)
        for s in ((b, h, sq, d), (b, h, sk, d), (b, h, sk, dv), (b, h, sq, dv))
    ]
    mask = None if mshape is None else rng.uniform(size=mshape) < 0.3
    if mask is not None and mshape[2] > 1:
        mask[:, :, 5] = True
    ts = [Tensor.from_data(a, dev) for a in arrays]
    if dtype == "bfloat16":
        ts = [t.cast("bfloat16") for t in ts]
        arrays = [t.cast("float32").into_data().array for t in ts]  # what bf16 holds
    q, k, v = (t.require_grad() for t in ts[:3])
    m = None if mask is None else Tensor.from_data(mask, dev)
    out = module.attention(q, k, v, mask=m, causal=causal, dropout=dropout)
    grads = (out * ts[3]).sum().backward()
    got = [out] + [t.grad(grads) for t in (q, k, v)]
    got = [np.asarray(t.cast("float32").into_data().array, np.float64) for t in got]
    q64, k64, v64, g64 = (a.astype(np.float64) for a in arrays)
    want = reference(q64, k64, v64, mask, causal, 1 / math.sqrt(d), g64, z)
    tol = 3e-2 if dtype == "bfloat16" else 2e-4
    for name, a, w in zip(("out", "dq", "dk", "dv"), got, want):
        np.testing.assert_allclose(a, w, rtol=tol, atol=tol, err_msg=name)
