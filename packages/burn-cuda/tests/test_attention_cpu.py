"""Cuda's attention as burn_gpu's flash kernels, their CUDA C text run on the CPU stand-in
(`cpu_backend.py`: g++, the launcher's real grid, block and parameter slots) from
`burn_tensor.module.attention` on `Autodiff(Cuda())`: one forward launch, one launch of each
backward kernel (Autodiff hands the backward the forward's saved lse), values against numpy
float64; bfloat16 storage read and written by the kernels themselves; and the text through
`nvcc --ptx` where nvcc exists. GPU runs: `test_attention_gpu.py`."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu
from burn_autodiff import Autodiff
from burn_cuda import _kernel_source
from burn_gpu import attention_backward_kernels, attention_forward_kernel, attention_kernels
from burn_tensor import Tensor, module
from burn_tensor.ops import attention_keep_mask as keep_mask, draw_attention_seed as draw_seed
from cpu_backend import cuda_on_cpu_backend
from fake_cupy import FakeCupy, asfake

pytestmark = [
    pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed"),
    pytest.mark.usefixtures("two_pass_backward", "mma_sync_forward"),  # the kernels these tests were written for
]
KERNELS = _kernel_source.ATTENTION
LAUNCHED: set = set()


def expected(d, dv, dtype="float32"):
    """The launches of one forward + backward: the tensor-core kernels at d == dv in (32, 64)
    (`_attention_mma.py`, `_attention_tf32.py`), else tiled or row kernels by dtype and dims."""
    if d == dv and d in (32, 64) and dtype in ("float32", "bfloat16"):
        kind = "tf32" if dtype == "float32" else "mma"
        return [f"attn_fwd_{kind}", f"attn_bwd_dq_{kind}", f"attn_bwd_dkv_{kind}"]
    bwd = [name for name, *_ in attention_backward_kernels(dtype, d, dv)]
    return [attention_forward_kernel(dtype, d, dv)[0], *bwd]


def reference(q, k, v, mask, causal, scale, g, z=None):
    """(out, dq, dk, dv) in float64 (masked = left out; a fully masked row gives 0); `z` the
    dropout's keep / (1 - p) on the weights, or None."""
    s = np.einsum("bhid,bhjd->bhij", q, k) * scale
    sq, sk = s.shape[2], s.shape[3]
    hidden = np.zeros(s.shape, bool)
    if mask is not None:
        hidden |= np.broadcast_to(mask, s.shape)
    if causal:
        hidden |= np.arange(sk)[None, :] > np.arange(sq)[:, None] + (sk - sq)
    s = np.where(hidden, -np.inf, s)
    top = s.max(-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
    tot = e.sum(-1, keepdims=True)
    p = e / np.where(tot > 0, tot, 1.0)
    z = np.ones(p.shape) if z is None else z
    dp = (g @ np.swapaxes(v, 2, 3)) * z
    ds = p * (dp - (dp * p).sum(-1, keepdims=True)) * scale
    return (p * z) @ v, ds @ k, np.swapaxes(ds, 2, 3) @ q, np.swapaxes(p * z, 2, 3) @ g


def _run(B, arrays, mask, causal, dtype=None, dropout=0.0, seed=7):
    dev = Autodiff(B).device()
    dev.seed(seed)
    q, k, v, g = (Tensor.from_data(a, dev) for a in arrays)
    if dtype is not None:
        q, k, v, g = (t.cast(dtype) for t in (q, k, v, g))
    q, k, v = (t.require_grad() for t in (q, k, v))
    m = None if mask is None else Tensor.from_data(mask, dev)
    out = module.attention(q, k, v, mask=m, causal=causal, dropout=dropout)
    grads = (out * g).sum().backward()
    res = [out] + [t.grad(grads) for t in (q, k, v)]
    return [np.asarray(t.cast("float32").into_data().array, np.float64) for t in res]


CASES = [
    # (b, h, sq, sk, d, dv, causal, mask shape)
    (1, 2, 70, 70, 16, 16, True, None),  # two query blocks, a partial tile
    (1, 1, 30, 30, 80, 72, False, None),  # past the tiled kernels' dims: the row kernels
    (1, 1, 20, 20, 20, 12, False, None),  # tiled forward, row backward (dims not multiples of 8)
    (2, 1, 9, 37, 16, 8, False, (2, 1, 1, 37)),  # cross attention, key padding mask
    (1, 1, 20, 20, 64, 64, True, (1, 1, 20, 20)),  # mask and causal, a fully masked row (tf32)
    (1, 1, 20, 20, 24, 24, True, (1, 1, 20, 20)),  # the same on the tiled kernels
]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_attention_runs_the_flash_kernels(case):
    b, h, sq, sk, d, dv, causal, mshape = case
    rng = np.random.default_rng(sum(case[:6]))
    arrays = [
        rng.standard_normal(s).astype(np.float32)
        for s in ((b, h, sq, d), (b, h, sk, d), (b, h, sk, dv), (b, h, sq, dv))
    ]
    mask = None if mshape is None else rng.uniform(size=mshape) < 0.3
    if mask is not None and mshape[2] > 1:
        mask[:, :, 3] = True
    with cuda_on_cpu_backend(FakeCupy()) as (B, cp):
        got = _run(B, arrays, mask, causal)
        names = [launch.name for launch in cp.launches if launch.name in _kernel_source.SIZED]
    LAUNCHED.update(names)
    assert names == expected(d, dv)  # no second forward for the backward, no decomposition
    want = reference(*(a.astype(np.float64) for a in arrays[:3]), mask, causal, 1 / math.sqrt(d),
                     arrays[3].astype(np.float64))  # fmt: skip
    for name, a, w in zip(("out", "dq", "dk", "dv"), got, want):
        np.testing.assert_allclose(a, w, rtol=3e-4, atol=3e-4, err_msg=name)


def _seed_words(B, seed):
    """The seed words `module.attention` draws first after `device.seed(seed)`."""
    dev = Autodiff(B).device()
    dev.seed(seed)
    return draw_seed(dev).numpy()


@pytest.mark.parametrize("p", [0.1, 0.5])
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_attention_dropout_runs_inside_the_flash_kernels(case, p):
    # issue 36: dropout on the weights in the forward and backward kernels (the same launches
    # as without it), values against numpy float64 with the op's keep mask
    b, h, sq, sk, d, dv, causal, mshape = case
    rng = np.random.default_rng(sum(case[:6]) + 1)
    arrays = [
        rng.standard_normal(s).astype(np.float32)
        for s in ((b, h, sq, d), (b, h, sk, d), (b, h, sk, dv), (b, h, sq, dv))
    ]
    mask = None if mshape is None else rng.uniform(size=mshape) < 0.3
    with cuda_on_cpu_backend(FakeCupy()) as (B, cp):
        words = _seed_words(B, 3)
        got = _run(B, arrays, mask, causal, dropout=p, seed=3)
        names = [launch.name for launch in cp.launches if launch.name in _kernel_source.SIZED]
    assert names == expected(d, dv)
    z = keep_mask(words, p, b, h, sq, sk) / (1 - p)
    want = reference(*(a.astype(np.float64) for a in arrays[:3]), mask, causal, 1 / math.sqrt(d),
                     arrays[3].astype(np.float64), z)  # fmt: skip
    for name, a, w in zip(("out", "dq", "dk", "dv"), got, want):
        np.testing.assert_allclose(a, w, rtol=3e-4, atol=3e-4, err_msg=name)


@pytest.mark.parametrize("p", [0.0, 0.3])
def test_bfloat16_storage_runs_the_kernels_natively(p):
    """A bfloat16 Cuda(): the kernels read and write bf16 (no float32 detour copies), with
    dropout on the weights too."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((1, 2, 40, 16)).astype(np.float32) for _ in range(4)]
    with cuda_on_cpu_backend(FakeCupy(), float_dtype="bfloat16") as (B, cp):
        words = _seed_words(B, 5)
        got = _run(B, arrays, None, True, "bfloat16", dropout=p, seed=5)
        names = [launch.name for launch in cp.launches if launch.name in _kernel_source.SIZED]
    LAUNCHED.update(names)
    assert names == expected(16, 16, "bfloat16")
    r = [a.astype(ml_dtypes.bfloat16).astype(np.float64) for a in arrays]  # what bf16 holds
    z = keep_mask(words, p, 1, 2, 40, 40) / (1 - p) if p else None
    want = reference(*r[:3], None, True, 0.25, r[3], z)
    for name, a, w in zip(("out", "dq", "dk", "dv"), got, want):
        np.testing.assert_allclose(a, w, rtol=3e-2, atol=3e-2, err_msg=name)


def test_a_strided_head_dim_is_copied_first():
    """A query whose head dim is not contiguous (a transposed view) is copied (bf16 as its
    16-bit patterns), then read by the kernels: the same bits as the contiguous call."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal((1, 2, 24, 16)).astype(np.float32) for _ in range(3)]
    for dt in (np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16)):
        with cuda_on_cpu_backend(FakeCupy()) as (B, cp):
            q, k, v = (asfake(a.astype(dt)) for a in arrays)
            qt = asfake(np.swapaxes(arrays[0].astype(dt), 2, 3).copy()).swapaxes(2, 3)
            assert qt.strides[3] != qt.itemsize and np.array_equal(np.asarray(qt), np.asarray(q))
            a = np.asarray(B.attention(q, k, v, None, False, 0.25)).astype(np.float64)
            b = np.asarray(B.attention(qt, k, v, None, False, 0.25)).astype(np.float64)
        np.testing.assert_array_equal(a, b)
        r = [x.astype(dt).astype(np.float64) for x in arrays]
        want = reference(*r, None, False, 0.25, np.zeros((1, 2, 24, 16)))[0]
        tol = 3e-2 if dt.name == "bfloat16" else 2e-5
        np.testing.assert_allclose(a, want, rtol=tol, atol=tol)


def test_every_attention_kernel_ran():
    """After the cases above (run alone, with -k, it names what the selection left out)."""
    assert sorted(set(KERNELS) - LAUNCHED) == []


@pytest.mark.parametrize("dtype,d", [("float32", 64), ("bfloat16", 64), ("float32", 128)])
def test_attention_text_compiles_with_nvcc(nvcc_ptx, dtype, d):
    proc, ptx = nvcc_ptx(f"attention_{dtype}_{d}", _kernel_source.SOURCES["attn_fwd"](dtype, d, d))
    assert proc.returncode == 0, proc.stderr
    text = ptx.read_text()
    assert all(f".entry {name}(" in text for name in attention_kernels(dtype, d, d))
