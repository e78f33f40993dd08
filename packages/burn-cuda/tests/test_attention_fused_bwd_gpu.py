"""The fused (one-pass) tensor-core attention backward (`_attention_fused_bwd.py`,
`BURN_CUDA_ATTENTION_FUSED_BWD=1`) on the GPU (skips without one): the real `mma.sync`,
`ldmatrix` and `red.global.add` against numpy float64 and against the two-pass kernels (the
default), for bfloat16, float16 and float32, head dims 32 and 64, ragged seq lengths, causal or
not, Bool masks, dropout and head-split inputs; and `module.attention` under Autodiff with the
switch on (launch plans replayed). The CPU stand-in runs the same text in
test_attention_fused_bwd_cpu.py."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_attention_mma_cpu import NP, reference

pytestmark = pytest.mark.gpu
WORDS = np.array([123457, -98765], np.int32)  # the dropout's seed words
TOL = {"bfloat16": 5e-2, "float16": 1e-2, "float32": 2e-4}  # test_attention_mma_gpu's (masks)

CASES = [
    # (b, h, sq, sk, d, causal, mask shape, dropout, head-split inputs)
    (2, 3, 128, 128, 64, False, None, 0.0, False),
    (2, 3, 128, 128, 64, True, None, 0.0, False),
    (1, 2, 200, 77, 64, True, None, 0.0, False),  # seq_q > seq_k: rows that see no key
    (1, 2, 77, 300, 64, True, None, 0.0, True),  # seq_q < seq_k, head-split
    (2, 2, 130, 130, 32, False, (2, 1, 1, 130), 0.1, False),  # key padding, dropout
    (2, 2, 300, 300, 64, True, (2, 2, 300, 300), 0.2, True),  # full mask, causal, dropout
    (2, 4, 1024, 1024, 64, False, None, 0.0, False),  # the sequence length
]


def _device(cp, a):
    """A host array on the GPU in its own layout (bfloat16 as its 16-bit patterns; a
    head-split view of [b, s, h, d] memory stays one)."""
    split = not a.flags.c_contiguous
    host = np.ascontiguousarray(a.transpose(0, 2, 1, 3)) if split else a
    if host.itemsize == 2:
        x = cp.asarray(host.view(np.uint16)).view(host.dtype)
    else:
        x = cp.asarray(host)
    return x.transpose(0, 2, 1, 3) if split else x


def _host(cp, x):
    if x.dtype.itemsize == 2:
        return cp.asnumpy(cp.ascontiguousarray(x.view(np.uint16))).view(x.dtype)
    return cp.asnumpy(x)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_fused_backward_matches_float64_and_the_two_pass_kernels(
    cuda_ready, case, dtype, monkeypatch
):
    import cupy as cp
    from burn_cuda import Cuda

    b, h, sq, sk, d, causal, mshape, p, split = case
    rng = np.random.default_rng(sq + sk + d)
    shapes = ((b, sq, h, d), (b, sk, h, d), (b, sk, h, d), (b, sq, h, d))
    host = [rng.standard_normal(s).astype(np.float32).astype(NP[dtype]) for s in shapes]
    host = [a.transpose(0, 2, 1, 3) if split else np.ascontiguousarray(a.transpose(0, 2, 1, 3))
            for a in host]  # fmt: skip
    mask = None if mshape is None else rng.uniform(size=mshape) < 0.3
    if mask is not None and mshape[2] > 1:
        mask[:, :, 5] = True  # a row that sees no key
    q, k, v, g = (_device(cp, a) for a in host)
    m = None if mask is None else cp.asarray(mask)
    seed = cp.asarray(WORDS) if p else None
    B = Cuda(float_dtype=dtype)
    scale = 1 / math.sqrt(d)
    out, lse = B.attention_with_lse(q, k, v, m, causal, scale, p, seed)
    got = {}
    for flag in ("1", "0"):
        monkeypatch.setenv("BURN_CUDA_ATTENTION_FUSED_BWD", flag)
        grads = B.attention_lse_backward(q, k, v, out, lse, m, g, causal, scale, p, seed)
        if split:
            assert all(x.transpose(0, 2, 1, 3).flags.c_contiguous for x in grads)
        got[flag] = [_host(cp, x).astype(np.float64) for x in grads]
    from burn_tensor.ops import attention_keep_mask as keep_mask

    z = keep_mask(WORDS, p, b, h, sq, sk) / (1 - p) if p else None
    r = [a.astype(np.float64) for a in host]
    want = reference(*r[:3], mask, causal, scale, r[3], z)
    tol = TOL[dtype]
    for name, a, t, w in zip(("dq", "dk", "dv"), got["1"], got["0"], want[1:]):
        np.testing.assert_allclose(a, w, rtol=tol, atol=tol, err_msg=name)
        np.testing.assert_allclose(a, t, rtol=tol, atol=tol, err_msg=name)
    for name, a, t in zip(("dk", "dv"), got["1"][1:], got["0"][1:]):
        # the dK/dV pass's products in its order: the same up to the mma units' own rounding
        close = 1e-6 if dtype == "float32" else 1e-2
        np.testing.assert_allclose(a, t, rtol=close, atol=close, err_msg=name)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
def test_module_attention_with_the_fused_backward(cuda_ready, dtype, monkeypatch):
    """`module.attention` on Autodiff(Cuda(dtype)), the switch on: three steps (the second
    records the launch plans, the third replays them), the same values each time, against
    float64."""
    from burn_autodiff import Autodiff
    from burn_cuda import Cuda
    from burn_tensor import Tensor, module

    monkeypatch.setenv("BURN_CUDA_ATTENTION_FUSED_BWD", "1")
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((2, 4, 150, 64)).astype(NP[dtype]) for _ in range(4)]
    dev = Autodiff(Cuda(float_dtype=dtype)).device()
    steps = []
    for _ in range(3):
        q, k, v, g = (Tensor.from_data(a.astype(np.float32), dev).cast(dtype) for a in arrays)
        q, k, v = (t.require_grad() for t in (q, k, v))
        out = module.attention(q, k, v, causal=True)
        grads = (out * g).sum().backward()
        steps.append([np.asarray(t.cast("float32").into_data().array, np.float64)
                      for t in (out, q.grad(grads), k.grad(grads), v.grad(grads))])  # fmt: skip
    r = [a.astype(np.float64) for a in arrays]
    want = reference(*r[:3], None, True, 1 / 8, r[3])
    tol = TOL[dtype]
    for got in steps:
        for name, a, w in zip(("out", "dq", "dk", "dv"), got, want):
            np.testing.assert_allclose(a, w, rtol=tol, atol=tol, err_msg=name)
    for name, a, b in zip(("out", "dk", "dv"), *(s[:1] + s[2:] for s in steps[1:])):
        np.testing.assert_array_equal(a, b, err_msg=name)  # deterministic (dQ's atomics aside)
