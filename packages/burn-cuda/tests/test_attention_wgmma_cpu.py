"""The Hopper attention forward (`_attention_wgmma.py`, `wgmma.mma_async` on sm_90a) without a
GPU: its CUDA text on the CPU stand-in, whose `wg_ss` / `wg_rs` read the operands through the
descriptors' byte offsets by the core-matrix layout formulas (`_wgmma.py`; the H200 checked
those formulas against numpy), against numpy float64, beside the mma.sync forward, routed from
the backend (the stand-in's device reports compute capability 9.0), and the text through
`nvcc -cubin -arch=sm_90a` where nvcc exists. GPU runs: `test_attention_wgmma_gpu.py`."""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu
from burn_cuda._attention_wgmma import wgmma_program, wgmma_takes
from cpu_backend import cuda_on_cpu_backend
from fake_cupy import FakeCupy, asfake
from test_attention_cpu import reference
from test_attention_mma_cpu import TOL, _inputs, lse2

needs_gxx = pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed")
pytestmark = pytest.mark.usefixtures("wgmma_forward")  # whatever the environment says

CASES = [
    # (dtype, b, h, sq, sk, causal)
    ("bfloat16", 1, 2, 100, 100, False),  # two query blocks, a ragged key tile
    ("bfloat16", 2, 1, 70, 130, True),  # seq_q < seq_k: the causal offset, 3 key tiles
    ("float16", 1, 1, 130, 70, True),  # seq_q > seq_k: the first 60 rows see no key
    ("float16", 1, 1, 64, 192, False),  # whole tiles, both stages reused
]


def _forward(case, env=None):
    dtype, b, h, sq, sk, causal = case
    q, k, v = _inputs((b, h, sq, 64), (b, h, sk, 64), dtype, sq + sk + b)
    with cuda_on_cpu_backend(FakeCupy()) as (B, cp):
        out, lse = B._attention_fwd(*(asfake(a) for a in (q, k, v)), None, causal, 0.125)
        names = [launch.name for launch in cp.launches]
        out, lse = np.asarray(out).astype(np.float64), np.asarray(lse).astype(np.float64)
    return (q, k, v), out, lse, names


@needs_gxx
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_wgmma_forward_matches_float64(case):
    dtype, b, h, sq, sk, causal = case
    (q, k, v), out, lse, names = _forward(case)
    assert names == ["attn_fwd_wgmma"]
    r = [a.astype(np.float64) for a in (q, k, v)]
    want = reference(*r, None, causal, 0.125, np.zeros((b, h, sq, 64)))[0]
    np.testing.assert_allclose(out, want, rtol=TOL[dtype], atol=TOL[dtype])
    np.testing.assert_allclose(lse, lse2(r[0], r[1], causal, 0.125), rtol=1e-5, atol=1e-5)
    if sq > sk and causal:  # rows that see no key: 0 and -inf, as every flash kernel
        assert (out[:, :, : sq - sk] == 0).all() and (lse[:, :, : sq - sk] == -np.inf).all()


@needs_gxx
def test_wgmma_forward_is_the_mma_forward_within_rounding(monkeypatch):
    """The same P (rounded to the storage type) and statistic as `attn_fwd_mma`: outputs differ
    only by the products' summation order."""
    case = CASES[1]
    _, out, lse, _ = _forward(case)
    monkeypatch.setenv("BURN_CUDA_ATTENTION_WGMMA", "0")
    _, out_mma, lse_mma, names = _forward(case)
    assert names == ["attn_fwd_mma"]
    np.testing.assert_allclose(out, out_mma, rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(lse, lse_mma, rtol=1e-6, atol=1e-6)


def test_wgmma_routing():
    """Opt-in; then sm_90 only, 16-bit storage, head dim 64, no mask or dropout."""
    assert wgmma_takes("bfloat16", 64, 64, 90, False)
    assert wgmma_takes("float16", 64, 64, 90, False)
    assert not wgmma_takes("bfloat16", 64, 64, 80, False)  # Ampere: no wgmma
    assert not wgmma_takes("bfloat16", 64, 64, 100, False)  # the `a` target is sm_90's alone
    assert not wgmma_takes("bfloat16", 64, 64, 90, True)  # a mask or dropout: mma.sync
    assert not wgmma_takes("float32", 64, 64, 90, False)
    assert not wgmma_takes("bfloat16", 32, 32, 90, False)


def test_wgmma_is_the_default_and_switches_off(monkeypatch):
    monkeypatch.delenv("BURN_CUDA_ATTENTION_WGMMA")
    assert wgmma_takes("bfloat16", 64, 64, 90, False)
    monkeypatch.setenv("BURN_CUDA_ATTENTION_WGMMA", "0")
    assert not wgmma_takes("bfloat16", 64, 64, 90, False)


def test_wgmma_program_names_a_bad_request():
    with pytest.raises(ValueError, match=r"attn_fwd_wgmma: .*got 'float32', 64"):
        wgmma_program("float32", 64)
    with pytest.raises(ValueError, match=r"head_dim one of \(64,\), got 'bfloat16', 128"):
        wgmma_program("bfloat16", 128)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_wgmma_text_builds_for_sm90a(tmp_path, dtype):
    """The text NVRTC builds on the GPU machine, through nvcc for sm_90a: no error, no spill,
    and no wgmma serialised by ptxas, nor a wait it injects (its C751x notes)."""
    src = tmp_path / f"wg_{dtype}.cu"
    src.write_text(wgmma_program(dtype, 64))
    cmd = ["nvcc", "-cubin", "-arch=sm_90a", "--ptxas-options=-v", "-o", str(tmp_path / "a.cubin")]
    proc = subprocess.run([*cmd, str(src)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "0 bytes spill stores" in proc.stderr and "C751" not in proc.stderr, proc.stderr
