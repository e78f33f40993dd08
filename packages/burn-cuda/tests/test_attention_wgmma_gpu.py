"""The Hopper attention forward (`attn_fwd_wgmma`) on a compute-capability-9.0 GPU against
float64 and beside the mma.sync forward (`BURN_CUDA_ATTENTION_WGMMA=0`), and Autodiff's
gradients through it (the mma.sync backward reads its output and statistic). Skips without
cupy, a GPU or sm_90."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from burn_cuda import _attention
from test_attention_mma_cpu import NP, TOL, lse2, reference

WGMMA = _attention.wgmma_kernel

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("wgmma_forward")]  # whatever the environment says
cp = pytest.importorskip("cupy")
ml_dtypes = pytest.importorskip("ml_dtypes")

CASES = [
    # (dtype, b, h, sq, sk, causal)
    ("bfloat16", 2, 3, 128, 128, False),
    ("bfloat16", 2, 3, 100, 300, True),
    ("float16", 1, 4, 300, 100, True),
    ("float16", 2, 8, 1024, 1024, False),
    ("bfloat16", 1, 2, 1000, 1000, True),
]


def _sm90() -> bool:
    try:
        return cp.cuda.runtime.getDeviceCount() > 0 and cp.cuda.Device(0).compute_capability == "90"
    except Exception:  # noqa: BLE001 - no driver, no device
        return False


needs_sm90 = pytest.mark.skipif(not _sm90(), reason="needs a compute-capability-9.0 GPU")


def _dev(a):
    return cp.asarray(a.view(np.uint16)).view(a.dtype) if a.dtype == NP["bfloat16"] else cp.asarray(a)


@needs_sm90
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_wgmma_forward_on_the_gpu(case, monkeypatch):
    from burn_cuda import Cuda

    dtype, b, h, sq, sk, causal = case
    rng = np.random.default_rng(sq + sk)
    q, k, v = (rng.standard_normal(s).astype(np.float32).astype(NP[dtype])
               for s in ((b, h, sq, 64), (b, h, sk, 64), (b, h, sk, 64)))  # fmt: skip
    B = Cuda(float_dtype=dtype)
    built = []  # the wgmma kernels the call asked for: it must be the one that ran
    monkeypatch.setattr(_attention, "wgmma_kernel", lambda *a: built.append(a) or WGMMA(*a))
    out, lse = B._attention_fwd(_dev(q), _dev(k), _dev(v), None, causal, 0.125)
    assert built == [(dtype, 64)]
    got = cp.asnumpy(out.view(np.uint16)).view(NP[dtype]) if dtype == "bfloat16" else cp.asnumpy(out)
    lse = cp.asnumpy(lse).astype(np.float64)
    r = [a.astype(np.float64) for a in (q, k, v)]
    want = reference(*r, None, causal, 0.125, np.zeros((b, h, sq, 64)))[0]
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=TOL[dtype], atol=TOL[dtype])
    np.testing.assert_allclose(lse, lse2(r[0], r[1], causal, 0.125), rtol=1e-4, atol=1e-4)
    monkeypatch.setenv("BURN_CUDA_ATTENTION_WGMMA", "0")
    out2, lse2_ = B._attention_fwd(_dev(q), _dev(k), _dev(v), None, causal, 0.125)
    assert built == [(dtype, 64)]  # switched off: the mma.sync forward
    other = cp.asnumpy(out2.view(np.uint16)).view(NP[dtype]) if dtype == "bfloat16" else cp.asnumpy(out2)
    np.testing.assert_allclose(got.astype(np.float64), other.astype(np.float64), rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(lse, cp.asnumpy(lse2_), rtol=1e-5, atol=1e-5)


@needs_sm90
def test_wgmma_forward_gradients_through_autodiff():
    """`module.attention` on Autodiff(Cuda(bf16)): the forward runs wgmma, the backward the
    mma.sync kernels from its output; gradients against float64."""
    from burn_autodiff import Autodiff
    from burn_cuda import Cuda
    from burn_tensor import Tensor, module

    rng = np.random.default_rng(3)
    shapes = [(2, 2, 96, 64)] * 3
    host = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    dev = Autodiff(Cuda(float_dtype="bfloat16")).device()
    ts = [Tensor.from_data(a, dev).require_grad() for a in host]
    out = module.attention(*ts, None, causal=True)
    grads = (out * out).sum().backward()
    r = [a.astype(NP["bfloat16"]).astype(np.float64) for a in host]
    scale = 1 / math.sqrt(64)
    o64 = reference(*r, None, True, scale, np.zeros(shapes[0]))[0]
    want = reference(*r, None, True, scale, 2 * o64)  # d(sum out^2) / d out = 2 out
    np.testing.assert_allclose(out.to_data().numpy().astype(np.float64), o64, atol=5e-2)
    for t, w in zip(ts, want[1:], strict=True):
        g = t.grad(grads).to_data().numpy().astype(np.float64)
        np.testing.assert_allclose(g, w, rtol=5e-2, atol=5e-2)
