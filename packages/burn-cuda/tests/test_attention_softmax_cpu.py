"""The tensor-core forwards' online softmax (`_attention_parts_fwd.online_softmax`, session 24:
the scale inside the exponent's FFMA, a max over the raw scores, no test in a tile a row sees
whole) at its edges, on the CPU stand-in, for every forward text (bf16 `mma.sync` pipe and
session-17, float32 3xTF32 pipe and session-17, the opt-in wgmma one): a negative scale (the
max is then over -s), a NaN in one row's scores (that row NaN, the others as float64 says), a
zero scale, and causal rows that see no key (0 and -inf)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu
from cpu_backend import cuda_on_cpu_backend
from fake_cupy import FakeCupy, asfake
from test_attention_cpu import reference
from test_attention_mma_cpu import NP, TOL

pytestmark = [
    pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed"),
    pytest.mark.usefixtures("two_pass_backward"),
]
#: (dtype, BURN_CUDA_ATTENTION_PIPE, BURN_CUDA_ATTENTION_WGMMA, the kernel that runs)
TEXTS = [
    ("bfloat16", "1", "0", "attn_fwd_mma"),
    ("bfloat16", "0", "0", "attn_fwd_mma"),
    ("float32", "1", "0", "attn_fwd_tf32"),
    ("float32", "0", "0", "attn_fwd_tf32"),
    ("float16", "1", "1", "attn_fwd_wgmma"),
]


def _forward(dtype, q, k, v, causal, scale):
    with cuda_on_cpu_backend(FakeCupy()) as (B, cp):
        out, lse = B._attention_fwd(*(asfake(a) for a in (q, k, v)), None, causal, scale)
        names = [launch.name for launch in cp.launches]
        return np.asarray(out).astype(np.float64), np.asarray(lse).astype(np.float64), names


@pytest.mark.parametrize("text", TEXTS, ids=[f"{t[3]}-{t[0]}-pipe{t[1]}" for t in TEXTS])
@pytest.mark.parametrize("scale", [-0.2, 0.0])
def test_softmax_edges(text, scale, monkeypatch):
    dtype, pipe, wgmma, name = text
    monkeypatch.setenv("BURN_CUDA_ATTENTION_PIPE", pipe)
    monkeypatch.setenv("BURN_CUDA_ATTENTION_WGMMA", wgmma)
    rng = np.random.default_rng(5)
    sq, sk = 100, 70  # causal: the first 30 rows see no key; 2 key tiles, the second ragged
    q, k, v = (rng.standard_normal((1, 2, n, 64)).astype(np.float32).astype(NP[dtype])
               for n in (sq, sk, sk))  # fmt: skip
    q[0, 1, 50, 3] = np.nan  # one row's scores are all NaN
    out, lse, names = _forward(dtype, q, k, v, True, scale)
    assert names == [name]
    r = [a.astype(np.float64) for a in (q, k, v)]
    want = reference(*r, None, True, scale, np.zeros((1, 2, sq, 64)))[0]
    assert np.isnan(out[0, 1, 50]).all() and np.isnan(lse[0, 1, 50])
    ok = np.ones(out.shape[:3], bool)
    ok[0, 1, 50] = False
    np.testing.assert_allclose(out[ok], want[ok], rtol=TOL[dtype], atol=TOL[dtype])
    assert (out[:, :, :30] == 0).all() and (lse[:, :, :30] == -np.inf).all()
    # the saved statistic: log2 of the row sum of 2^(s scale log2 e), the row max taken
    s = np.einsum("bhid,bhjd->bhij", r[0], r[1]) * scale * 1.4426950408889634
    s = np.where(np.arange(sk)[None, :] > np.arange(sq)[:, None] + (sk - sq), -np.inf, s)
    with np.errstate(invalid="ignore", divide="ignore"):
        top = s.max(-1, keepdims=True)
        want_lse = (np.log2(np.exp2(s - np.where(np.isfinite(top), top, 0)).sum(-1, keepdims=True))
                    + np.where(np.isfinite(top), top, 0))[..., 0]  # fmt: skip
    seen = ok.copy()
    seen[:, :, :30] = False
    np.testing.assert_allclose(lse[seen], want_lse[seen], rtol=1e-5, atol=1e-5)
