"""The tensor-core attention's head-split outputs (`_attention_views.split_out`) on the GPU (skips
without one): for MHA's head-split inputs, out, dq, dk, dv are [b, s, h, d] memory, their head
merges are views, and the bits equal the contiguous outputs' (`BURN_CUDA_ATTENTION_SPLIT_OUT=0`)
in both kernel texts; launch plans replay that layout. The CPU stand-in runs the same checks
in test_attention_layout_cpu.py and counts MHA's copies in test_attention_layout_mha_cpu.py."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_attention_mma_cpu import NP, reference

# bit-for-bit comparisons: the two-pass backward (float32's default fused one sums dQ by
# atomics, whose order varies on a GPU; test_attention_fused_bwd_gpu.py checks its layouts)
pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("two_pass_backward")]
B_, H, SQ, SK = 2, 4, 200, 257  # ragged query blocks and key tiles


def _heads(cp, host, dtype):
    """A [b, s, h * d] host array on the GPU, split as MHA does: [b, h, s, d] views."""
    a = cp.asarray(host) if dtype == "float32" else cp.asarray(host.view(np.uint16)).view(host.dtype)
    b, s, hd = a.shape
    return a.reshape(b, s, H, hd // H).swapaxes(1, 2)


def _bits(cp, a):
    """`a`'s bit patterns on the host, contiguous [b, h, s, d]."""
    return cp.asnumpy(cp.ascontiguousarray(a.view(np.uint16 if a.itemsize == 2 else np.uint32)))


@pytest.mark.parametrize("pipe", ["1", "0"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
def test_head_split_outputs_on_the_gpu(cuda_ready, dtype, pipe, monkeypatch):
    import cupy as cp
    from burn_cuda import Cuda

    monkeypatch.setenv("BURN_CUDA_ATTENTION_PIPE", pipe)
    monkeypatch.setenv("BURN_CUDA_ATTENTION_PLANS", "0")
    d = 64
    rng = np.random.default_rng(3)
    shapes = ((B_, SQ, H * d), (B_, SK, H * d), (B_, SK, H * d), (B_, SQ, H * d))
    host = [rng.standard_normal(s).astype(np.float32).astype(NP[dtype]) for s in shapes]
    q, k, v, g = (_heads(cp, a, dtype) for a in host)
    B = Cuda(float_dtype=dtype)
    scale = 1 / math.sqrt(d)
    runs = []
    for flag in ("1", "0"):
        monkeypatch.setenv("BURN_CUDA_ATTENTION_SPLIT_OUT", flag)
        out, lse = B.attention_with_lse(q, k, v, None, True, scale)
        grads = B.attention_lse_backward(q, k, v, out, lse, None, g, True, scale)
        runs.append((out, lse, *grads))
    for name, a in zip(("out", "dq", "dk", "dv"), runs[0][:1] + runs[0][2:]):
        assert a.swapaxes(1, 2).flags.c_contiguous, name
        b, h, s, dd = a.shape
        merged = a.swapaxes(1, 2).reshape(b, s, h * dd)
        assert merged.data.ptr == a.data.ptr, name  # a view: no copy kernel
    assert all(a.flags.c_contiguous for a in runs[1])
    for name, a, c in zip(("out", "lse", "dq", "dk", "dv"), *runs):
        np.testing.assert_array_equal(_bits(cp, a), _bits(cp, c), err_msg=name)
    r = [np.swapaxes(a.astype(np.float64).reshape(a.shape[0], a.shape[1], H, d), 1, 2) for a in host]
    want = reference(*r[:3], None, True, scale, r[3])
    tol = {"bfloat16": 5e-2, "float16": 1e-2, "float32": 2e-4}[dtype]
    got = [runs[0][0], *runs[0][2:]]
    for name, a, w in zip(("out", "dq", "dk", "dv"), got, want):
        a = _bits(cp, a).view(NP[dtype]).astype(np.float64)
        np.testing.assert_allclose(a, w, rtol=tol, atol=tol, err_msg=name)


def test_replayed_plans_write_the_head_split_layout(cuda_ready):
    """The plan recorded at the second call replays the layout (and strides) it recorded: the
    third call's outputs are head-split and the same bits as the first's."""
    import cupy as cp
    from burn_cuda import Cuda

    d = 32
    rng = np.random.default_rng(4)
    host = [rng.standard_normal((B_, SQ, H * d)).astype(np.float32) for _ in range(4)]
    q, k, v, g = (_heads(cp, a, "float32") for a in host)
    B = Cuda()
    runs = []
    for _ in range(3):
        out, lse = B.attention_with_lse(q, k, v, None, False, 0.2)
        runs.append((out, *B.attention_lse_backward(q, k, v, out, lse, None, g, False, 0.2)))
    for run in runs:
        assert all(a.swapaxes(1, 2).flags.c_contiguous for a in run)
    for run in runs[1:]:
        for name, a, w in zip(("out", "dq", "dk", "dv"), run, runs[0]):
            np.testing.assert_array_equal(_bits(cp, a), _bits(cp, w), err_msg=name)
