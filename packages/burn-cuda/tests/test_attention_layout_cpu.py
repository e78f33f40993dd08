"""Cuda's tensor-core attention writes its output and dQ/dK/dV in the layout of its inputs when
they are MHA's head-split views ([b, s, h * d] projections reshaped to [b, s, h, d] and seen as
[b, h, s, d]: `_attention_views.split_out`), so the head merge `swap_dims(1, 2).reshape([b, s,
h * d])` after it is a view, not a copy. On the CPU stand-in (`cpu_backend.py`): the layouts,
the merges sharing the outputs' memory, the same bits as the contiguous outputs
(`BURN_CUDA_ATTENTION_SPLIT_OUT=0`) and as contiguous inputs, and numpy float64; launch plans
replaying the layout they recorded. The MHA count: `test_attention_layout_mha_cpu.py`."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu
from burn_cuda import _attention_plan, _kernel_source
from burn_tensor.ops import attention_keep_mask as keep_mask
from cpu_backend import cuda_on_cpu_backend
from fake_cupy import FakeCupy, asfake
from test_attention_cpu import reference

ml_dtypes = pytest.importorskip("ml_dtypes")
pytestmark = [
    pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed"),
    pytest.mark.usefixtures("two_pass_backward", "mma_sync_forward"),  # the kernels these tests were written for
]
NP = {"bfloat16": np.dtype(ml_dtypes.bfloat16), "float16": np.dtype(np.float16),
      "float32": np.dtype(np.float32)}  # fmt: skip
BITS = {2: np.uint16, 4: np.uint32}
TOL = {"bfloat16": 5e-2, "float16": 8e-3, "float32": 2e-5}  # test_attention_mma_cpu's
WORDS = np.array([123457, -98765], np.int32)  # the dropout's seed words


def heads(B, x, h: int):
    """MHA's head split through the backend's ops: [b, s, h * d] -> [b, h, s, d] (a view)."""
    b, s, hd = x.shape
    return B.float_swap_dims(B.float_reshape(x, (b, s, h, hd // h)), 1, 2)


def merge(B, a):
    """MHA's head merge through the backend's ops: [b, h, s, d] -> [b, s, h * d]."""
    b, h, s, d = a.shape
    return B.float_reshape(B.float_swap_dims(a, 1, 2), (b, s, h * d))


def is_view_of(m, a) -> bool:
    """Whether `m` is `a`'s memory (same first byte, shared), not a copy of it."""
    return m.data.ptr == a.data.ptr and np.shares_memory(np.asarray(m), np.asarray(a))


def call(B, q, k, v, g, mask, causal, scale, p):
    """(out, lse, dq, dk, dv): the forward with its statistic, then the backward from it."""
    seed = asfake(WORDS) if p else None
    out, lse = B.attention_with_lse(q, k, v, mask, causal, scale, p, seed)
    grads = B.attention_lse_backward(q, k, v, out, lse, mask, g, causal, scale, p, seed)
    return (out, lse, *grads)


def bits(a) -> np.ndarray:
    """The bit patterns of `a`, contiguous [b, h, s, d]."""
    a = np.ascontiguousarray(np.asarray(a))
    return a.view(BITS.get(a.itemsize, a.dtype))


def projections(dtype, b, h, sq, sk, d, seed):
    """[b, s, h * d] arrays standing for the Q, K, V projections and the incoming gradient."""
    rng = np.random.default_rng(seed)
    shapes = ((b, sq, h * d), (b, sk, h * d), (b, sk, h * d), (b, sq, h * d))
    return [rng.standard_normal(s).astype(np.float32).astype(NP[dtype]) for s in shapes]


CASES = [
    # (dtype, head dim, causal, mask shape (None: none), dropout, pipe text)
    ("bfloat16", 64, False, None, 0.0, "1"),
    ("bfloat16", 32, True, (2, 1, 1, 70), 0.3, "1"),  # key padding and dropout
    ("bfloat16", 64, True, (2, 2, 40, 70), 0.0, "0"),  # the session-17 text, a full mask
    ("float16", 64, True, None, 0.2, "1"),
    ("float16", 32, False, (2, 1, 40, 70), 0.0, "1"),
    ("float16", 32, True, None, 0.0, "0"),
    ("float32", 32, True, (2, 1, 1, 70), 0.0, "1"),  # 3xTF32
    ("float32", 64, False, None, 0.5, "1"),
    ("float32", 32, False, (2, 2, 40, 70), 0.1, "0"),
]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_head_split_inputs_get_head_split_outputs_with_the_same_bits(case, monkeypatch):
    dtype, d, causal, mshape, p, pipe = case
    monkeypatch.setenv("BURN_CUDA_ATTENTION_PIPE", pipe)
    monkeypatch.setenv("BURN_CUDA_ATTENTION_PLANS", "0")  # each call by the general path
    b, h, sq, sk = 2, 2, 40, 70  # two key tiles, ragged; cross attention (seq_q != seq_k)
    arrays = projections(dtype, b, h, sq, sk, d, d + sq)
    rng = np.random.default_rng(7)
    mask = None if mshape is None else rng.uniform(size=mshape) < 0.3
    scale = 1 / math.sqrt(d)
    with cuda_on_cpu_backend(FakeCupy(), float_dtype=dtype) as (B, cp):
        q, k, v, g = (heads(B, asfake(a), h) for a in arrays)
        m = None if mask is None else asfake(mask)
        got = call(B, q, k, v, g, m, causal, scale, p)
        names = [x.name for x in cp.launches if x.name in _kernel_source.SIZED]
        for name, a in zip(("out", "dq", "dk", "dv"), got[:1] + got[2:]):
            assert a.shape == (b, h, sq if name in ("out", "dq") else sk, d), name
            assert a.swapaxes(1, 2).flags.c_contiguous, name  # [b, s, h, d] memory
            assert is_view_of(merge(B, a), a), name  # the merge copies nothing
        monkeypatch.setenv("BURN_CUDA_ATTENTION_SPLIT_OUT", "0")  # today's contiguous outputs
        flat = call(B, q, k, v, g, m, causal, scale, p)
        assert all(a.flags.c_contiguous for a in flat)
        monkeypatch.delenv("BURN_CUDA_ATTENTION_SPLIT_OUT")
        cq, ck, cv, cg = (asfake(np.ascontiguousarray(np.asarray(a))) for a in (q, k, v, g))
        dense = call(B, cq, ck, cv, cg, m, causal, scale, p)  # contiguous inputs: as before
        assert all(a.flags.c_contiguous for a in dense)
        got64 = [np.asarray(a).astype(np.float64) for a in got]
    kind = "tf32" if dtype == "float32" else "mma"
    assert names == [f"attn_{n}_{kind}" for n in ("fwd", "bwd_dq", "bwd_dkv")]
    for name, a, f, c in zip(("out", "lse", "dq", "dk", "dv"), got, flat, dense):
        np.testing.assert_array_equal(bits(a), bits(f), err_msg=name)
        np.testing.assert_array_equal(bits(a), bits(c), err_msg=name)
    z = keep_mask(WORDS, p, b, h, sq, sk) / (1 - p) if p else None
    r = [np.asarray(x).astype(np.float64) for x in (q, k, v, g)]
    want = reference(*r[:3], mask, causal, scale, r[3], z)
    for name, a, w in zip(("out", "dq", "dk", "dv"), got64[:1] + got64[2:], want):
        np.testing.assert_allclose(a, w, rtol=TOL[dtype], atol=TOL[dtype], err_msg=name)


def test_only_head_split_views_of_contiguous_projections_are_followed():
    """Contiguous [b, h, s, d] inputs, a projection that is a slice of a wider one (a fused QKV
    [b, s, 3 h d]), and h == 1 (both layouts the same memory) keep contiguous outputs; the
    backward at head dim 128 (burn_gpu's SIMT kernels, not in scope) writes contiguous
    gradients while reading the head-split forward output through its strides."""
    b, s, h, d = 1, 24, 2, 32
    x = np.random.default_rng(3).standard_normal((b, s, 3 * h * d)).astype(NP["bfloat16"])
    with cuda_on_cpu_backend(FakeCupy()) as (B, cp):
        fused = asfake(x)
        q = heads(B, fused[..., : h * d], h)  # a view, but its rows step 3 h d
        out = B.attention_with_lse(q, q, q, None, True, 0.2)[0]
        assert out.flags.c_contiguous
        one = heads(B, asfake(np.ascontiguousarray(x[..., :d])), 1)
        assert B.attention_with_lse(one, one, one, None, True, 0.2)[0].flags.c_contiguous
        q128 = heads(B, asfake(projections("bfloat16", b, h, s, s, 128, 5)[0]), h)
        out, lse = B.attention_with_lse(q128, q128, q128, None, False, 0.1)
        assert out.swapaxes(1, 2).flags.c_contiguous
        grads = B.attention_lse_backward(q128, q128, q128, out, lse, None, q128, False, 0.1)
        assert all(a.flags.c_contiguous for a in grads)
        names = [x.name for x in cp.launches if x.name in _kernel_source.SIZED]
    assert names[2] == "attn_fwd_mma" and "attn_bwd_dq_mma" not in names


def _three_calls(B, q, k, v):
    """The forward three times (seen, recorded, replayed): the outputs."""
    return [B.attention_with_lse(q, k, v, None, True, 0.25)[0] for _ in range(3)]


def test_a_replayed_plan_allocates_the_layout_its_launches_write():
    """A plan's launches hold the output strides of the recording: its replay must allocate
    the head-split layout again (a contiguous array written with those strides would hold
    the rows in the wrong places) and give the recording's bits."""
    b, s, h, d = 2, 40, 2, 64
    x = projections("bfloat16", b, h, s, s, d, 11)
    with cuda_on_cpu_backend(FakeCupy()) as (B, cp):
        q, k, v, g = (heads(B, asfake(a), h) for a in x)
        outs = _three_calls(B, q, k, v)
        assert any(_attention_plan._PLANS.values())
        grads = []
        for _ in range(3):  # the backward's plan: seen, recorded, replayed
            out, lse = B.attention_with_lse(q, k, v, None, True, 0.25)
            grads.append(B.attention_lse_backward(q, k, v, out, lse, None, g, True, 0.25))
        plans = [p for p in _attention_plan._PLANS.values() if p]
        assert len(plans) == 2 and all(any(spec[3] for spec in p.allocs) for p in plans)
    for a in outs + [x for gs in grads for x in gs]:
        assert a.swapaxes(1, 2).flags.c_contiguous
    for a in outs[1:]:
        np.testing.assert_array_equal(bits(a), bits(outs[0]))
    for gs in grads[1:]:
        for name, a, w in zip(("dq", "dk", "dv"), gs, grads[0]):
            np.testing.assert_array_equal(bits(a), bits(w), err_msg=name)


def test_the_split_switch_flipped_after_a_plan_was_kept_is_obeyed(monkeypatch):
    """`BURN_CUDA_ATTENTION_SPLIT_OUT` is part of the plan key: flipped after a plan was kept,
    the call writes contiguous outputs (the plan's head-split strides are not replayed)."""
    x = projections("float32", 1, 2, 24, 24, 32, 13)
    with cuda_on_cpu_backend(FakeCupy()) as (B, cp):
        q, k, v = (heads(B, asfake(a), 2) for a in x[:3])
        split = _three_calls(B, q, k, v)
        assert any(_attention_plan._PLANS.values())
        monkeypatch.setenv("BURN_CUDA_ATTENTION_SPLIT_OUT", "0")
        flat = _three_calls(B, q, k, v)
    assert all(a.swapaxes(1, 2).flags.c_contiguous for a in split)
    assert all(a.flags.c_contiguous for a in flat)
    for a in flat:
        np.testing.assert_array_equal(bits(a), bits(split[0]))
