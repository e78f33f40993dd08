"""The Hopper attention backward (`_attention_wgmma_bwd.py`, `wgmma.mma_async` on sm_90a) without a
GPU: its CUDA text on the CPU stand-in (whose `wg_ss`, `wg_ss_tt` and `wg_rs` read the operands
through the descriptors by the layout formulas the H200 checked, `_wgmma.py`) against numpy
float64, routed from the backend (the stand-in's device reports compute capability 9.0), beside
the mma.sync backward, and the text through `nvcc -cubin -arch=sm_90a` where nvcc exists. GPU
runs: `test_attention_wgmma_gpu.py`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu
from burn_cuda._attention_wgmma_bwd import wgmma_bwd_program, wgmma_bwd_takes
from cpu_backend import cuda_on_cpu_backend
from fake_cupy import FakeCupy, asfake
from test_attention_cpu import reference
from test_attention_mma_cpu import _inputs

needs_gxx = pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed")
pytestmark = pytest.mark.usefixtures("mma_sync_forward")  # the backward's own routing

CASES = [
    # (dtype, b, h, sq, sk, causal)
    ("bfloat16", 1, 2, 100, 100, False),  # two query tiles, a ragged key block
    ("bfloat16", 2, 1, 70, 130, True),  # seq_q < seq_k: the causal offset, 3 key blocks
    ("float16", 1, 1, 130, 70, True),  # seq_q > seq_k: the first 60 rows see no key
    ("float16", 1, 1, 128, 64, False),  # whole tiles only: no left-out test
]
TOL = {"bfloat16": 3e-2, "float16": 4e-3}


def _backward(case):
    dtype, b, h, sq, sk, causal = case
    q, k, v = _inputs((b, h, sq, 64), (b, h, sk, 64), dtype, sq + sk + b + 1)
    g = _inputs((b, h, sq, 64), (1, 1, 1, 1), dtype, 9)[0]
    with cuda_on_cpu_backend(FakeCupy()) as (B, cp):
        fq, fk, fv, fg = (asfake(a) for a in (q, k, v, g))
        out, lse = B._attention_fwd(fq, fk, fv, None, causal, 0.125)
        got = B._attention_bwd(fq, fk, fv, out, lse, None, fg, causal, 0.125)
        got = [np.asarray(a).astype(np.float64) for a in got]
        names = [launch.name for launch in cp.launches]
    return (q, k, v, g), got, names


@needs_gxx
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_wgmma_backward_matches_float64(case):
    dtype, b, h, sq, sk, causal = case
    arrays, got, names = _backward(case)
    assert names == ["attn_fwd_mma", "attn_bwd_prep_wgmma", "attn_bwd_wgmma", "attn_bwd_dqcvt_wgmma"]
    r = [a.astype(np.float64) for a in arrays]
    want = reference(*r[:3], None, causal, 0.125, r[3])[1:]
    for name, a, w in zip(("dq", "dk", "dv"), got, want):
        np.testing.assert_allclose(a, w, rtol=TOL[dtype], atol=TOL[dtype], err_msg=name)
    if sq > sk and causal:  # queries that see no key get no gradient
        assert (got[0][:, :, : sq - sk] == 0).all()


@needs_gxx
def test_wgmma_backward_is_the_mma_backward_within_rounding(monkeypatch):
    """The same Pᵗ and dSᵗ (rounded to the storage type) as the mma.sync passes: the gradients
    differ only by the products' summation order."""
    case = CASES[1]
    _, got, _ = _backward(case)
    monkeypatch.setenv("BURN_CUDA_ATTENTION_WGMMA_BWD", "0")
    _, want, names = _backward(case)
    assert "attn_bwd_wgmma" not in names
    for name, a, w in zip(("dq", "dk", "dv"), got, want):
        np.testing.assert_allclose(a, w, rtol=2e-2, atol=2e-2, err_msg=name)


def test_wgmma_backward_routing(monkeypatch):
    """sm_90 only, 16-bit storage, head dim 64 (= value dim), no mask or dropout; the switch."""
    assert wgmma_bwd_takes("bfloat16", 64, 64, 90, False)
    assert wgmma_bwd_takes("float16", 64, 64, 90, False)
    assert not wgmma_bwd_takes("float32", 64, 64, 90, False)
    assert not wgmma_bwd_takes("bfloat16", 64, 64, 89, False)
    assert not wgmma_bwd_takes("bfloat16", 64, 64, 100, False)
    assert not wgmma_bwd_takes("bfloat16", 32, 32, 90, False)
    assert not wgmma_bwd_takes("bfloat16", 64, 32, 90, False)
    assert not wgmma_bwd_takes("bfloat16", 64, 64, 90, True)
    monkeypatch.setenv("BURN_CUDA_ATTENTION_WGMMA_BWD", "0")
    assert not wgmma_bwd_takes("bfloat16", 64, 64, 90, False)


def test_wgmma_backward_refuses_other_variants_by_name():
    with pytest.raises(ValueError, match="attn_bwd_wgmma: dtype must be one of"):
        wgmma_bwd_program("float32", 64)
    with pytest.raises(ValueError, match="head_dim one of"):
        wgmma_bwd_program("bfloat16", 128)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed here")
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_wgmma_backward_builds_for_sm90a_without_spills(dtype, tmp_path):
    """The text NVRTC builds on the H200, through nvcc for sm_90a: no error, no spill, no wgmma
    serialised by ptxas and no wait it injects (its C751x notes name the cause)."""
    src = tmp_path / "bwd.cu"
    src.write_text(wgmma_bwd_program(dtype, 64))
    proc = subprocess.run(
        ["nvcc", "-cubin", "-arch=sm_90a", "-Xptxas", "-v", "-o", str(tmp_path / "bwd.cubin"),
         str(src)], capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "0 bytes spill stores, 0 bytes spill loads" in proc.stderr
    assert "C751" not in proc.stderr, proc.stderr  # (C7510-C7519: serialised, waits injected)


@needs_gxx
def test_wgmma_backward_writes_head_split_gradients(monkeypatch):
    """MHA's head-split inputs get head-split dQ, dK, dV (the merge after them a view), with the
    bits of contiguous inputs and within rounding of float64."""
    from test_attention_layout_cpu import bits, call, heads, is_view_of, merge, projections

    monkeypatch.setenv("BURN_CUDA_ATTENTION_PLANS", "0")  # each call by the general path
    b, h, sq, sk, d = 2, 2, 40, 70, 64
    arrays = projections("bfloat16", b, h, sq, sk, d, 5)
    with cuda_on_cpu_backend(FakeCupy(), float_dtype="bfloat16") as (B, cp):
        q, k, v, g = (heads(B, asfake(a), h) for a in arrays)
        got = call(B, q, k, v, g, None, True, 0.125, 0.0)
        assert "attn_bwd_wgmma" in [x.name for x in cp.launches]
        for name, a in zip(("dq", "dk", "dv"), got[2:]):
            assert a.swapaxes(1, 2).flags.c_contiguous, name  # [b, s, h, d] memory
            assert is_view_of(merge(B, a), a), name
        cq, ck, cv, cg = (asfake(np.ascontiguousarray(np.asarray(a))) for a in (q, k, v, g))
        dense = call(B, cq, ck, cv, cg, None, True, 0.125, 0.0)
        r = [np.asarray(x).astype(np.float64) for x in (q, k, v, g)]
        got64 = [np.asarray(a).astype(np.float64) for a in got[2:]]
        for name, a, c in zip(("dq", "dk", "dv"), got[2:], dense[2:]):
            np.testing.assert_array_equal(bits(a), bits(c), err_msg=name)
    want = reference(*r[:3], None, True, 0.125, r[3])[1:]
    for name, a, w in zip(("dq", "dk", "dv"), got64, want):
        np.testing.assert_allclose(a, w, rtol=TOL["bfloat16"], atol=TOL["bfloat16"], err_msg=name)
