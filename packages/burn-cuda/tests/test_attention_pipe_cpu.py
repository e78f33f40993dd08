"""The ldmatrix + cp.async tensor-core attention kernels (`_attention_pipe.py`,
`_attention_pipe_bwd.py`, `_mma_pipe.py`; float32: `_attention_tf32_pipe.py`'s forward and
`_attention_tf32_bwd.py`'s `PIPE`) against
the session-17 kernels they replace (`BURN_CUDA_ATTENTION_PIPE=0`) on the CPU stand-in:
the same bits, forward and backward (the products sum the same elements in the same order;
only where each fragment comes from changed), and against numpy float64. The stand-in's
ldmatrix gathers through `_mma_layout.py`'s LD_* maps (tests/test_mma_layout.py checks them
against the PTX ISA) and its cp.async writes shared memory only when the issuing thread's
`cp.async.wait_group` retires the group, so a tile read before its wait reads stale bytes."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu
from burn_cuda import _attention
from cpu_backend import cuda_on_cpu_backend
from fake_cupy import FakeCupy, asfake
from test_attention_cpu import reference
from test_attention_mma_cpu import _inputs

KERNEL = _attention.kernel  # the real one (each run wraps it in a spy of its own)
needs_gxx = pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed")
# the two-pass backward these tests were written for (float32 defaults to the fused one)
pytestmark = pytest.mark.usefixtures("two_pass_backward", "mma_sync_forward")

CASES = [
    # (dtype, sq, sk, d, causal): ragged tiles, several key (query) tiles so both stages and
    # the prefetch of the last tile run; the float32 cases reach the dK/dV pass's PIPE text
    ("bfloat16", 150, 200, 64, True),  # 2 forward blocks of 128 rows, 4 key tiles
    ("float16", 130, 70, 32, False),
    ("bfloat16", 200, 50, 64, True),  # the first 128-row block sees no key: copies, no wait
    ("bfloat16", 70, 130, 128, True),  # forward only (the backward at 128 is burn_gpu's)
    ("float32", 70, 70, 64, True),  # 2 query and 2 key tiles, ragged (3xTF32: slow stand-in)
    ("float32", 70, 40, 32, False),  # 2 backward query blocks
]


def _run(dtype, sq, sk, d, causal, pipe, monkeypatch):
    """(bits of out, lse, dq, dk, dv; the `pipe` option of every tensor-core kernel built)."""
    monkeypatch.setenv("BURN_CUDA_ATTENTION_PIPE", "1" if pipe else "0")
    built = []

    def spy(name, *dtypes, **options):
        built.append((name, options.get("pipe")))
        return KERNEL(name, *dtypes, **options)

    monkeypatch.setattr(_attention, "kernel", spy)
    q, k, v = _inputs((1, 2, sq, d), (1, 2, sk, d), dtype, sq + sk + d)
    g = _inputs((1, 2, sq, d), (1, 1, 1, 1), dtype, 7)[0]
    scale = 1 / math.sqrt(d)
    with cuda_on_cpu_backend(FakeCupy()) as (B, _cp):
        fq, fk, fv, fg = (asfake(a) for a in (q, k, v, g))
        out, lse = B._attention_fwd(fq, fk, fv, None, causal, scale)
        got = [out, lse]
        if d <= 64:
            got += list(B._attention_bwd(fq, fk, fv, out, lse, None, fg, causal, scale))
        got = [np.asarray(a).copy() for a in got]
    return got, built, [a.astype(np.float64) for a in (q, k, v, g)]


@needs_gxx
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_pipe_kernels_give_the_session_17_bits(case, monkeypatch):
    new, built_new, r = _run(*case, True, monkeypatch)
    old, built_old, _ = _run(*case, False, monkeypatch)
    assert built_new and all(p is True for _, p in built_new)
    assert [n for n, _ in built_old] == [n for n, _ in built_new]
    assert all(p is False for _, p in built_old)
    for name, a, b in zip(("out", "lse", "dq", "dk", "dv"), new, old):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8), err_msg=name)
    dtype, sq, sk, d, causal = case
    want = reference(*r[:3], None, causal, 1 / math.sqrt(d), r[3])
    tol = {"bfloat16": 3e-2, "float16": 4e-3, "float32": 2e-5}[dtype]
    for name, a, w in zip(("out", "dq", "dk", "dv"), [new[0], *new[2:]], [want[0], *want[1:]]):
        np.testing.assert_allclose(a.astype(np.float64), w, rtol=tol, atol=tol, err_msg=name)


def test_ptx_has_ldmatrix_and_cp_async_only_in_the_pipe_text(nvcc_ptx):
    """nvcc --ptx (sm_90) of the bf16 kernels at head dim 64, both texts in one unit: the pipe
    text has one ldmatrix.x4 per fragment quad (the Q/K/V/dO A fragments, K's (Q's, dO's) B
    fragments two k16 steps at a time, the transposed B fragments two n8 tiles at a time; the
    backward's per-SUB loop rolled) and cp.async copies; the session-17 text has neither."""
    from burn_cuda._attention_pipe_bwd import SUB
    from burn_cuda._kernel_source import SOURCES

    d, keys, mt, sub = 64, 64, 2, SUB  # the backward's loop over SUB keys stays rolled
    want = {  # kernel -> (ldmatrix, ldmatrix.trans) of the pipe text
        "attn_fwd_mma": (mt * d // 16 + keys // 8 * d // 32, keys // 16 * d // 16),
        "attn_bwd_dq_mma": (2 * d // 16 + 2 * sub // 8 * d // 32, sub // 16 * d // 16),
        "attn_bwd_dkv_mma": (2 * d // 16 + 2 * sub // 8 * d // 32, 2 * sub // 16 * d // 16),
    }
    unit = ""
    for pipe in (True, False):
        for i, name in enumerate(want):
            options = {"extras": False, "pipe": pipe} | ({"tiles": mt} if i == 0 else {})
            src = SOURCES[name]("bfloat16", d, d, **options)
            undef = "".join(f"#undef {m}\n" for m in set(re.findall(r"^#define (\w+)", src, re.M)))
            unit += f"#define {name} {name}_{int(pipe)}\nnamespace p{int(pipe)}{i} {{\n{src}\n}}\n"
            unit += f"{undef}#undef {name}\n"
    proc, ptx = nvcc_ptx("attn_pipe", unit)
    assert proc.returncode == 0, proc.stderr
    entries = dict(re.findall(r"\.entry (\w+)\((.*?)(?=\.entry |\Z)", ptx.read_text(), re.S))
    for name, (plain, trans) in want.items():
        new, old = entries[f"{name}_1"], entries[f"{name}_0"]
        assert new.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == plain, name
        assert new.count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == trans, name
        assert "cp.async.cg.shared.global" in new and "cp.async.wait_group 1" in new, name
        assert "ldmatrix" not in old and "cp.async" not in old, name
