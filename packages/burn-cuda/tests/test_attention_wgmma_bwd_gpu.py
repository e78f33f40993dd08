"""The Hopper attention backward (`attn_bwd_wgmma`) on a compute-capability-9.0 GPU against
float64 and beside the mma.sync backward (`BURN_CUDA_ATTENTION_WGMMA_BWD=0`), from the mma.sync
forward's output and statistic and from the wgmma forward's. Skips without cupy, a GPU or
sm_90."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from burn_cuda import _attention
from test_attention_mma_cpu import NP, reference
from test_attention_wgmma_gpu import CASES, _dev, needs_sm90  # the forward's cases

BUILD = _attention.wgmma_bwd_kernel

pytestmark = pytest.mark.gpu
cp = pytest.importorskip("cupy")

TOL = {"bfloat16": 4e-2, "float16": 6e-3}


def _host(a, dtype):
    return (cp.asnumpy(a.view(np.uint16)).view(NP[dtype]) if dtype == "bfloat16"
            else cp.asnumpy(a)).astype(np.float64)  # fmt: skip


@needs_sm90
@pytest.mark.parametrize("wgmma_fwd", ["0", "1"])
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_wgmma_backward_on_the_gpu(case, wgmma_fwd, monkeypatch):
    from burn_cuda import Cuda

    dtype, b, h, sq, sk, causal = case
    monkeypatch.setenv("BURN_CUDA_ATTENTION_WGMMA", wgmma_fwd)
    rng = np.random.default_rng(sq + sk + 1)
    q, k, v = (rng.standard_normal(s).astype(np.float32).astype(NP[dtype])
               for s in ((b, h, sq, 64), (b, h, sk, 64), (b, h, sk, 64)))  # fmt: skip
    g = rng.standard_normal((b, h, sq, 64)).astype(np.float32).astype(NP[dtype])
    B = Cuda(float_dtype=dtype)
    built = []  # the wgmma backward kernels the call asked for: it must be the one that ran
    monkeypatch.setattr(_attention, "wgmma_bwd_kernel", lambda *a: built.append(a) or BUILD(*a))
    dq_, dk_, dv_, dg_ = (_dev(a) for a in (q, k, v, g))
    out, lse = B._attention_fwd(dq_, dk_, dv_, None, causal, 0.125)
    got = [_host(a, dtype) for a in B._attention_bwd(dq_, dk_, dv_, out, lse, None, dg_, causal, 0.125)]
    assert built == [(dtype, 64, "attn_bwd_prep_wgmma"), (dtype, 64), (dtype, 64, "attn_bwd_dqcvt_wgmma")]
    r = [a.astype(np.float64) for a in (q, k, v, g)]
    want = reference(*r[:3], None, causal, 0.125, r[3])[1:]
    for name, a, w in zip(("dq", "dk", "dv"), got, want):
        np.testing.assert_allclose(a, w, rtol=TOL[dtype], atol=TOL[dtype], err_msg=name)
    monkeypatch.setenv("BURN_CUDA_ATTENTION_WGMMA_BWD", "0")
    other = [_host(a, dtype) for a in B._attention_bwd(dq_, dk_, dv_, out, lse, None, dg_, causal, 0.125)]
    assert len(built) == 3  # switched off: the mma.sync passes
    for name, a, w in zip(("dq", "dk", "dv"), got, other):
        np.testing.assert_allclose(a, w, rtol=2e-2, atol=2e-2, err_msg=name)
