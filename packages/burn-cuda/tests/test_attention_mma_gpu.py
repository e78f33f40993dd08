"""The tensor-core attention kernels (`_attention_mma.py`, `_attention_mma_bwd.py`,
`_attention_tf32.py`) on the GPU (skips without one): the real `mma.sync` and `cvt` instructions
against numpy float64 for bfloat16, float16 and float32 (3xTF32), forward and backward, the
same calls with `BURN_CUDA_ATTENTION_MMA=0` (burn_gpu's SIMT kernels) and with
`BURN_CUDA_ATTENTION_PIPE=0` (the session-17 tensor-core text). The CPU stand-in runs the same text in
test_attention_mma_cpu.py."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from burn_cuda import _attention
from burn_tensor._ops_attention import AttentionOps
from test_attention_mma_cpu import NP, lse2, reference

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("mma_sync_forward")]  # wgmma: its own file

CASES = [
    # (b, h, sq, sk, d, causal)
    (2, 3, 128, 128, 64, False),
    (2, 3, 128, 128, 64, True),
    (1, 2, 200, 200, 64, False),  # ragged: a partial query block and key tile
    (1, 2, 200, 200, 64, True),
    (1, 2, 200, 77, 64, True),  # seq_q > seq_k: rows that see no key
    (1, 2, 77, 300, 64, True),  # seq_q < seq_k
    (2, 2, 130, 130, 32, True),
    (2, 2, 130, 130, 128, False),
]


def _arrays(cp, case, dtype):
    b, h, sq, sk, d, _ = case
    rng = np.random.default_rng(sq + sk + d)
    host = [rng.standard_normal(s).astype(NP[dtype]) for s in ((b, h, sq, d), (b, h, sk, d), (b, h, sk, d))]
    if dtype == "float32":
        return host, [cp.asarray(a) for a in host]
    dev = [cp.asarray(a.view(np.uint16)).view(a.dtype) for a in host]
    return host, dev


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_mma_forward_matches_float64(cuda_ready, case, dtype):
    """bfloat16/float16: `attn_fwd_mma`; float32: the 3xTF32 `attn_fwd_tf32` (head dims 32, 64)."""
    import cupy as cp

    b, h, sq, sk, d, causal = case
    if dtype == "float32" and d == 128:
        pytest.skip("attn_fwd_tf32 takes head dims 32 and 64 (128 runs burn_gpu's kernels)")
    host, dev = _arrays(cp, case, dtype)
    out, lse = _attention._mma_forward(*dev, None, causal, 1 / math.sqrt(d))
    out = cp.asnumpy(out).astype(np.float64) if dtype == "float32" else (
        cp.asnumpy(out.view(np.uint16)).view(NP[dtype]).astype(np.float64))  # fmt: skip
    lse = cp.asnumpy(lse).astype(np.float64)
    r = [a.astype(np.float64) for a in host]
    want = reference(*r, None, causal, 1 / math.sqrt(d), np.zeros((b, h, sq, d)))[0]
    tol = {"bfloat16": 2e-2, "float16": 3e-3, "float32": 1e-5}[dtype]
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(lse, lse2(r[0], r[1], causal, 1 / math.sqrt(d)), rtol=1e-4, atol=1e-4)


AB_CASES = CASES[:4] + [CASES[6]]


def _host(cp, x, dtype):
    if dtype == "float32":
        return cp.asnumpy(x).astype(np.float64)
    return cp.asnumpy(x.view(np.uint16)).view(NP[dtype]).astype(np.float64)


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
@pytest.mark.parametrize("case", AB_CASES, ids=[str(c) for c in AB_CASES])
def test_mma_matches_the_simt_kernels(cuda_ready, case, dtype, monkeypatch):
    """Forward + backward with the tensor-core kernels and with BURN_CUDA_ATTENTION_MMA=0
    (burn_gpu's SIMT kernels): each against float64 and against the other."""
    import cupy as cp
    from burn_cuda import Cuda

    b, h, sq, sk, d, causal = case
    host, dev = _arrays(cp, case, dtype)
    B = Cuda(float_dtype=dtype)
    scale = 1 / math.sqrt(d)
    g = dev[0]  # any gradient of the output's shape
    got = []
    for flag in ("1", "0"):
        monkeypatch.setenv("BURN_CUDA_ATTENTION_MMA", flag)
        out, lse = B._attention_fwd(*dev, None, causal, scale)
        grads = B._attention_bwd(*dev, out, lse, None, g, causal, scale)
        got.append([_host(cp, x, dtype) for x in (out, *grads)])
    r = [a.astype(np.float64) for a in host]
    want = reference(*r, None, causal, scale, r[0])
    tol = 5e-2 if dtype == "bfloat16" else 2e-4
    for name, a, s, w in zip(("out", "dq", "dk", "dv"), got[0], got[1], want):
        np.testing.assert_allclose(a, w, rtol=tol, atol=tol, err_msg=name)
        np.testing.assert_allclose(a, s, rtol=tol, atol=tol, err_msg=name)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("case", AB_CASES, ids=[str(c) for c in AB_CASES])
def test_pipe_kernels_match_the_session_17_kernels(cuda_ready, case, dtype, monkeypatch):
    """Forward + backward with the ldmatrix + cp.async kernels and with
    BURN_CUDA_ATTENTION_PIPE=0 (the session-17 text): the products sum the same fragments in
    the same order, so they agree to rounding of the scalar code around them (the CPU stand-in,
    test_attention_pipe_cpu.py, finds the same bits)."""
    import cupy as cp
    from burn_cuda import Cuda

    d, causal = case[4], case[5]
    _, dev = _arrays(cp, case, dtype)
    B = Cuda(float_dtype=dtype)
    scale = 1 / math.sqrt(d)
    got = []
    for flag in ("1", "0"):
        monkeypatch.setenv("BURN_CUDA_ATTENTION_PIPE", flag)
        out, lse = B._attention_fwd(*dev, None, causal, scale)
        grads = B._attention_bwd(*dev, out, lse, None, dev[0], causal, scale)
        host = [_host(cp, x, dtype) for x in (out, *grads)]
        got.append([host[0], cp.asnumpy(lse).astype(np.float64), *host[1:]])
    tol = {"bfloat16": 8e-3, "float16": 1e-3, "float32": 1e-6}[dtype]
    for name, a, o in zip(("out", "lse", "dq", "dk", "dv"), *got):
        np.testing.assert_allclose(a, o, rtol=tol, atol=tol, err_msg=name)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
def test_module_attention_routes_to_the_mma(cuda_ready, dtype, monkeypatch):
    """`module.attention` on Autodiff(Cuda(dtype)) runs the tensor-core forward and backward
    once each, never the decomposition (the backward reads the forward's lse)."""
    from burn_autodiff import Autodiff
    from burn_cuda import Cuda
    from burn_tensor import Tensor, module

    seen = []
    fwd, bwd = _attention._mma_forward, _attention._mma_backward
    monkeypatch.setattr(_attention, "_mma_forward", lambda *a: seen.append("fwd") or fwd(*a))
    monkeypatch.setattr(_attention, "_mma_backward", lambda *a: seen.append("bwd") or bwd(*a))

    def no_decomposition(*a):
        raise AssertionError("the default decomposition ran")

    monkeypatch.setattr(AttentionOps, "_attention_probs", no_decomposition)
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((2, 4, 150, 64)).astype(NP[dtype]) for _ in range(4)]
    dev = Autodiff(Cuda(float_dtype=dtype)).device()
    q, k, v, g = (Tensor.from_data(a.astype(np.float32), dev).cast(dtype) for a in arrays)
    q, k, v = (t.require_grad() for t in (q, k, v))
    out = module.attention(q, k, v, causal=True)
    grads = (out * g).sum().backward()
    got = [np.asarray(t.cast("float32").into_data().array, np.float64)
           for t in (out, q.grad(grads), k.grad(grads), v.grad(grads))]  # fmt: skip
    assert seen == ["fwd", "bwd"]
    r = [a.astype(np.float64) for a in arrays]
    want = reference(*r[:3], None, True, 1 / 8, r[3])
    tol = 2e-4 if dtype == "float32" else 5e-2
    for name, a, w in zip(("out", "dq", "dk", "dv"), got, want):
        np.testing.assert_allclose(a, w, rtol=tol, atol=tol, err_msg=name)


MASKED = [
    # (b, h, sq, sk, d, causal, mask shape, dropout)
    (2, 4, 200, 257, 64, False, (2, 1, 1, 257), 0.0),  # key padding
    (2, 2, 300, 300, 64, True, (2, 2, 300, 300), 0.2),  # a full mask with causal, dropout
    (2, 2, 130, 130, 32, False, None, 0.1),
]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("case", MASKED, ids=[str(c) for c in MASKED])
def test_masks_and_dropout_on_tensor_cores(cuda_ready, case, dtype, monkeypatch):
    """`module.attention` with a Bool mask and dropout on Autodiff(Cuda(dtype)): the
    tensor-core forward and backward once each (never the decomposition), against float64 with
    the op's keep mask (the seed words it draws after `device.seed(17)`)."""
    from burn_autodiff import Autodiff
    from burn_cuda import Cuda
    from burn_tensor import Tensor, module
    from burn_tensor.ops import attention_keep_mask as keep_mask, draw_attention_seed as draw_seed

    seen = []
    fwd, bwd = _attention._mma_forward, _attention._mma_backward
    monkeypatch.setattr(_attention, "_mma_forward", lambda *a: seen.append("fwd") or fwd(*a))
    monkeypatch.setattr(_attention, "_mma_backward", lambda *a: seen.append("bwd") or bwd(*a))
    b, h, sq, sk, d, causal, mshape, p = case
    dev = Autodiff(Cuda(float_dtype=dtype)).device()
    dev.seed(17)
    z = keep_mask(draw_seed(dev).numpy(), p, b, h, sq, sk) / (1 - p) if p else None
    dev.seed(17)
    rng = np.random.default_rng(sq + sk + d)
    arrays = [rng.standard_normal(s).astype(NP[dtype])
              for s in ((b, h, sq, d), (b, h, sk, d), (b, h, sk, d), (b, h, sq, d))]  # fmt: skip
    mask = None if mshape is None else rng.uniform(size=mshape) < 0.3
    if mask is not None and mshape[2] > 1:
        mask[:, :, 5] = True  # a row that sees no key
    q, k, v, g = (Tensor.from_data(a.astype(np.float32), dev).cast(dtype) for a in arrays)
    q, k, v = (t.require_grad() for t in (q, k, v))
    m = None if mask is None else Tensor.from_data(mask, dev)
    out = module.attention(q, k, v, mask=m, causal=causal, dropout=p)
    grads = (out * g).sum().backward()
    got = [np.asarray(t.cast("float32").into_data().array, np.float64)
           for t in (out, q.grad(grads), k.grad(grads), v.grad(grads))]  # fmt: skip
    assert seen == ["fwd", "bwd"]
    r = [a.astype(np.float64) for a in arrays]
    want = reference(*r[:3], mask, causal, 1 / math.sqrt(d), r[3], z)
    tol = {"bfloat16": 5e-2, "float16": 1e-2, "float32": 2e-4}[dtype]
    for name, a, w in zip(("out", "dq", "dk", "dv"), got, want):
        np.testing.assert_allclose(a, w, rtol=tol, atol=tol, err_msg=name)


def test_mma_forward_statistic_feeds_the_simt_backward(cuda_ready):
    """bf16 at head dim 128: the mma forward (the tensor-core backward takes 32 and 64 only),
    then burn_gpu's backward kernels from its saved lse: against float64."""
    import cupy as cp
    from burn_cuda import Cuda

    case = (2, 2, 130, 130, 128, True)
    host, dev = _arrays(cp, case, "bfloat16")
    B = Cuda(float_dtype="bfloat16")
    scale = 1 / math.sqrt(128)
    out, lse = _attention._mma_forward(*dev, None, True, scale)
    grads = B._attention_bwd(*dev, out, lse, None, dev[0], True, scale)
    got = [_host(cp, x, "bfloat16") for x in (out, *grads)]
    r = [a.astype(np.float64) for a in host]
    want = reference(*r, None, True, scale, r[0])
    for name, a, w in zip(("out", "dq", "dk", "dv"), got, want):
        np.testing.assert_allclose(a, w, rtol=5e-2, atol=5e-2, err_msg=name)
