"""The tensor-core attention forward (`_attention_mma.py`) without a GPU: its CUDA text on the
CPU stand-in (`cpu_backend.py`: g++, the launcher's real grid and parameter slots; the `mma`
instruction emulated over the same fragment layout table, `_mma_layout.py`) against numpy
float64, routed from `module.attention` with burn_gpu's backward reading its saved statistic,
and every rendered variant through `nvcc --ptx -arch=sm_90` where nvcc exists. GPU runs:
`test_attention_mma_gpu.py`."""

from __future__ import annotations

import math
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu
from burn_autodiff import Autodiff
from burn_cuda import _kernel_source
from burn_cuda._attention_mma import DTYPES, HEAD_DIMS, mma_program
from burn_cuda._attention_mma import KEYS
from burn_cuda._attention_mma_bwd import BWD_HEAD_DIMS
from burn_cuda._attention_pipe_bwd import SUB
from burn_cuda._attention_tf32 import TF32_HEAD_DIMS, tf32_program
from burn_gpu import attention_backward_kernels
from burn_tensor import Tensor, module
from cpu_backend import cuda_on_cpu_backend
from fake_cupy import FakeCupy, asfake
from test_attention_cpu import reference

ml_dtypes = pytest.importorskip("ml_dtypes")
needs_gxx = pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed")
# the two-pass backward these tests were written for (float32 defaults to the fused one)
pytestmark = pytest.mark.usefixtures("two_pass_backward", "mma_sync_forward")
NP = {"bfloat16": np.dtype(ml_dtypes.bfloat16), "float16": np.dtype(np.float16), "float32": np.dtype(np.float32)}
TOL = {"bfloat16": 2e-2, "float16": 3e-3, "float32": 1e-5}
LOG2E = 1.4426950408889634


def lse2(q, k, causal, scale):
    """The saved statistic in float64: log2 of the row sum of 2^(s scale log2 e); -inf where
    every key is left out."""
    s = np.einsum("bhid,bhjd->bhij", q, k) * scale
    sq, sk = s.shape[2], s.shape[3]
    if causal:
        s = np.where(np.arange(sk)[None, :] > np.arange(sq)[:, None] + (sk - sq), -np.inf, s)
    top = s.max(-1, keepdims=True)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return ((np.log(np.exp(s - safe).sum(-1, keepdims=True)) + safe) * LOG2E)[..., 0]


def _inputs(shape_q, shape_k, dtype, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in (shape_q, shape_k, shape_k)]
    return [a.astype(NP[dtype]) for a in arrays]


FWD_CASES = [
    # (dtype, b, h, sq, sk, d, causal)
    ("bfloat16", 1, 1, 100, 100, 64, False),  # two query blocks, ragged key tile
    ("bfloat16", 1, 1, 70, 130, 32, True),  # seq_q < seq_k: causal offset
    ("float16", 1, 1, 130, 70, 64, True),  # seq_q > seq_k: the first 60 rows see no key
    ("float16", 1, 1, 40, 40, 128, False),
    ("float32", 1, 1, 70, 130, 32, True),  # 3xTF32
    ("float32", 1, 1, 40, 70, 64, False),
]


@needs_gxx
@pytest.mark.parametrize("case", FWD_CASES, ids=[str(c) for c in FWD_CASES])
def test_mma_forward_matches_float64(case):
    dtype, b, h, sq, sk, d, causal = case
    q, k, v = _inputs((b, h, sq, d), (b, h, sk, d), dtype, sum(case[1:6]))
    with cuda_on_cpu_backend(FakeCupy()) as (B, cp):
        out, lse = B._attention_fwd(*(asfake(a) for a in (q, k, v)), None, causal, 1 / math.sqrt(d))
        want_kernel = "attn_fwd_tf32" if dtype == "float32" else "attn_fwd_mma"
        assert [launch.name for launch in cp.launches] == [want_kernel]
        out, lse = np.asarray(out).astype(np.float64), np.asarray(lse).astype(np.float64)
    r = [a.astype(np.float64) for a in (q, k, v)]
    want = reference(*r, None, causal, 1 / math.sqrt(d), np.zeros((b, h, sq, d)))[0]
    # P is rounded to the storage type before P V (as FlashAttention-2): a few units of its eps
    np.testing.assert_allclose(out, want, rtol=TOL[dtype], atol=TOL[dtype])
    np.testing.assert_allclose(lse, lse2(r[0], r[1], causal, 1 / math.sqrt(d)), rtol=1e-5, atol=1e-5)
    if sq > sk and causal:  # rows that see no key: 0 and -inf, as the flash kernels
        assert (out[:, :, : sq - sk] == 0).all() and (lse[:, :, : sq - sk] == -np.inf).all()


BWD_CASES = FWD_CASES[:3] + [("float32", 1, 1, 70, 40, 32, True)]


@needs_gxx
@pytest.mark.parametrize("case", BWD_CASES, ids=[str(c) for c in BWD_CASES])
def test_mma_backward_matches_float64(case):
    """dQ, dK, dV of the two backward passes from the mma forward's output and statistic."""
    dtype, b, h, sq, sk, d, causal = case
    q, k, v = _inputs((b, h, sq, d), (b, h, sk, d), dtype, sum(case[1:6]) + 1)
    g = _inputs((b, h, sq, d), (1, 1, 1, 1), dtype, 9)[0]
    scale = 1 / math.sqrt(d)
    with cuda_on_cpu_backend(FakeCupy()) as (B, cp):
        fq, fk, fv, fg = (asfake(a) for a in (q, k, v, g))
        out, lse = B._attention_fwd(fq, fk, fv, None, causal, scale)
        got = B._attention_bwd(fq, fk, fv, out, lse, None, fg, causal, scale)
        got = [np.asarray(a).astype(np.float64) for a in got]
        kind = "tf32" if dtype == "float32" else "mma"
        assert [x.name for x in cp.launches] == [f"attn_{n}_{kind}" for n in ("fwd", "bwd_dq", "bwd_dkv")]
    r = [a.astype(np.float64) for a in (q, k, v, g)]
    want = reference(*r[:3], None, causal, scale, r[3])[1:]
    tol = {"bfloat16": 3e-2, "float16": 4e-3, "float32": 2e-5}[dtype]
    for name, a, w in zip(("dq", "dk", "dv"), got, want):
        np.testing.assert_allclose(a, w, rtol=tol, atol=tol, err_msg=name)


def _autodiff(B, dtype, arrays, causal):
    dev = Autodiff(B).device()
    q, k, v, g = (Tensor.from_data(a.astype(np.float32), dev).cast(dtype) for a in arrays)
    q, k, v = (t.require_grad() for t in (q, k, v))
    out = module.attention(q, k, v, causal=causal)
    grads = (out * g).sum().backward()
    res = [out] + [t.grad(grads) for t in (q, k, v)]
    return [np.asarray(t.cast("float32").into_data().array, np.float64) for t in res]


ROUTES = [
    # (dtype, head dim, the attention kernels one forward + backward launches; float16 and
    # float32 through module.attention: test_masks_and_dropout_run_on_tensor_cores)
    ("bfloat16", 64, ["attn_fwd_mma", "attn_bwd_dq_mma", "attn_bwd_dkv_mma"]),
    # 128: the mma forward's statistic read by burn_gpu's backward kernels
    ("bfloat16", 128, ["attn_fwd_mma"] + [n for n, *_ in attention_backward_kernels("bfloat16", 128, 128)]),
]


@needs_gxx
@pytest.mark.parametrize("route", ROUTES, ids=[f"{r[0]}-{r[1]}" for r in ROUTES])
def test_module_attention_routes_and_matches_float64(route):
    """`module.attention` on Autodiff(Cuda(dtype)): one forward, the backward from its saved
    statistic (no second forward), values against float64."""
    dtype, d, want_names = route
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((1, 1, 70, d)).astype(NP[dtype]) for _ in range(4)]
    with cuda_on_cpu_backend(FakeCupy(), float_dtype=dtype) as (B, cp):
        got = _autodiff(B, dtype, arrays, True)
        names = [launch.name for launch in cp.launches if launch.name in _kernel_source.SIZED]
    assert names == want_names
    r = [a.astype(np.float64) for a in arrays]
    want = reference(*r[:3], None, True, 1 / math.sqrt(d), r[3])
    tol = 1e-4 if dtype == "float32" else 5e-2
    for name, a, w in zip(("out", "dq", "dk", "dv"), got, want):
        np.testing.assert_allclose(a, w, rtol=tol, atol=tol, err_msg=name)


@needs_gxx
def test_float16_keeps_a_statistic_only_where_the_mma_backward_runs():
    """float16 has no burn_gpu flash kernels: at head dim 128 (no mma backward) its forward
    keeps no statistic, so the backward is the decomposition; at 64 it keeps the mma's."""
    q = asfake(_inputs((1, 1, 8, 128), (1, 1, 1, 1), "float16", 1)[0])
    q64 = asfake(_inputs((1, 1, 8, 64), (1, 1, 1, 1), "float16", 1)[0])
    with cuda_on_cpu_backend(FakeCupy(), float_dtype="float16") as (B, cp):
        assert B.attention_with_lse(q, q, q, None, True, 0.1)[1] is None
        assert B.attention_with_lse(q64, q64, q64, None, True, 0.1)[1] is not None
        assert [x.name for x in cp.launches] == ["attn_fwd_mma", "attn_fwd_mma"]


@needs_gxx
def test_the_switch_and_ineligible_calls_take_the_simt_kernels(monkeypatch):
    q, k, v = (asfake(a) for a in _inputs((1, 1, 20, 64), (1, 1, 20, 64), "bfloat16", 2))
    q48 = asfake(_inputs((1, 1, 20, 48), (1, 1, 1, 1), "bfloat16", 2)[0])
    with cuda_on_cpu_backend(FakeCupy()) as (B, cp):
        a = np.asarray(B._attention_fwd(q, k, v, None, False, 0.125)[0]).astype(np.float64)
        B._attention_fwd(q48, q48, q48, None, False, 0.125)  # head dim 48: the flash kernels
        monkeypatch.setenv("BURN_CUDA_ATTENTION_MMA", "0")
        b = np.asarray(B._attention_fwd(q, k, v, None, False, 0.125)[0]).astype(np.float64)
        names = [launch.name for launch in cp.launches]
    assert names == ["attn_fwd_mma", "attn_fwd_tiled", "attn_fwd_tiled"]
    np.testing.assert_allclose(a, b, rtol=2e-2, atol=2e-2)


@needs_gxx
def test_two_m16_tiles_per_warp_give_the_same_bits(monkeypatch):
    """The forward's 128-row blocks (two m16 tiles per warp, the default at head dim <= 64) and
    its 64-row blocks (BURN_CUDA_ATTENTION_WARP_ROWS=16): the grid each launches, and the same
    bits (each row's arithmetic is the same); head dim 128 always takes 64-row blocks."""
    q, k, v = (asfake(a) for a in _inputs((1, 2, 200, 64), (1, 2, 150, 64), "bfloat16", 4))
    q128 = asfake(_inputs((1, 1, 70, 128), (1, 1, 1, 1), "bfloat16", 4)[0])
    got = []
    with cuda_on_cpu_backend(FakeCupy()) as (B, cp):
        for rows in ("32", "16"):
            monkeypatch.setenv("BURN_CUDA_ATTENTION_WARP_ROWS", rows)
            out, lse = B._attention_fwd(q, k, v, None, True, 0.125)
            got.append((np.asarray(out).view(np.uint16).copy(), np.asarray(lse).copy()))
        monkeypatch.delenv("BURN_CUDA_ATTENTION_WARP_ROWS")
        B._attention_fwd(q128, q128, q128, None, True, 0.125)
        grids = [x[2] for x in cp.launches]
    assert grids == [(2 * 2,), (2 * 4,), (1 * 2,)]  # ceil(200 / 128), ceil(200 / 64), ceil(70 / 64)
    np.testing.assert_array_equal(got[0][0], got[1][0])
    np.testing.assert_array_equal(got[0][1], got[1][1])
    with pytest.raises(ValueError, match="tiles must be 1, or 2 for attn_fwd_mma at head_dim <= 64"):
        mma_program("bfloat16", 128, 128, tiles=2)


MASK_CASES = [
    # (dtype, b, h, sq, sk, d, causal, mask shape, dropout)
    ("bfloat16", 2, 1, 40, 70, 64, False, (2, 1, 1, 70), 0.0),  # key padding
    ("float16", 1, 2, 70, 50, 32, True, (1, 2, 70, 50), 0.3),  # causal, full mask, dropout
    ("float32", 1, 1, 40, 40, 32, False, None, 0.5),
]


@needs_gxx
@pytest.mark.parametrize("case", MASK_CASES, ids=[str(c) for c in MASK_CASES])
def test_masks_and_dropout_run_on_tensor_cores(case):
    """A Bool mask (broadcast strides) and dropout on the weights (the op's keep mask,
    regenerated by every kernel from the seed words) inside the tensor-core kernels, forward and
    backward, against numpy float64."""
    from burn_tensor.ops import attention_keep_mask as keep_mask
    from test_attention_cpu import _run, _seed_words

    dtype, b, h, sq, sk, d, causal, mshape, p = case
    rng = np.random.default_rng(sq + sk)
    arrays = [rng.standard_normal(s).astype(np.float32)
              for s in ((b, h, sq, d), (b, h, sk, d), (b, h, sk, d), (b, h, sq, d))]  # fmt: skip
    mask = None if mshape is None else rng.uniform(size=mshape) < 0.3
    if mask is not None and mshape[2] > 1:
        mask[:, :, 3] = True  # a row that sees no key
    with cuda_on_cpu_backend(FakeCupy(), float_dtype=dtype) as (B, cp):
        words = _seed_words(B, 3)
        got = _run(B, arrays, mask, causal, None if dtype == "float32" else dtype, dropout=p, seed=3)
        names = [x.name for x in cp.launches if x.name in _kernel_source.SIZED]
    kind = "tf32" if dtype == "float32" else "mma"
    assert names == [f"attn_{n}_{kind}" for n in ("fwd", "bwd_dq", "bwd_dkv")]
    z = keep_mask(words, p, b, h, sq, sk) / (1 - p) if p else None
    r = [a.astype(NP[dtype]).astype(np.float64) for a in arrays]
    want = reference(*r[:3], mask, causal, 1 / math.sqrt(d), r[3], z)
    tol = {"bfloat16": 5e-2, "float16": 8e-3, "float32": 2e-5}[dtype]
    for name, a, w in zip(("out", "dq", "dk", "dv"), got, want):
        np.testing.assert_allclose(a, w, rtol=tol, atol=tol, err_msg=name)


@needs_gxx
def test_gpus_before_ampere_keep_the_simt_kernels(monkeypatch):
    """Compute capability 7.5 (no bf16 / tf32 `mma.sync`): float32 and bfloat16 run burn_gpu's
    kernels, float16 the decomposition (no attention kernel launched)."""
    from fake_cupy import _DeviceCtx

    monkeypatch.setattr(_DeviceCtx, "compute_capability", "75")
    q = _inputs((1, 1, 20, 64), (1, 1, 1, 1), "float32", 2)[0]
    names = []
    for dtype in ("float32", "bfloat16", "float16"):
        with cuda_on_cpu_backend(FakeCupy(), float_dtype=dtype) as (B, cp):
            x = asfake(q.astype(NP[dtype]))
            B.attention_with_lse(x, x, x, None, True, 0.125)
            names.append([launch.name for launch in cp.launches if launch.name in _kernel_source.SIZED])
    assert names == [["attn_fwd_tiled"], ["attn_fwd_tiled"], []]


@needs_gxx
def test_views_are_read_in_place_or_copied_when_unaligned():
    """A [b, s, h, d] projection seen as [b, h, s, d] is read through its strides; a view with a
    row stride that is not a multiple of 8 elements (no 16-byte loads) is copied first: the
    same bits as the contiguous call either way."""
    q, k, v = _inputs((1, 2, 24, 32), (1, 2, 24, 32), "bfloat16", 3)
    with cuda_on_cpu_backend(FakeCupy()) as (B, cp):
        base = np.asarray(B._attention_fwd(asfake(q), asfake(k), asfake(v), None, True, 0.2)[0])
        qp = asfake(np.ascontiguousarray(q.transpose(0, 2, 1, 3))).transpose(0, 2, 1, 3)
        wide = asfake(np.zeros((1, 2, 24, 33), q.dtype))
        wide[..., :32] = k
        kw = wide[..., :32]
        assert kw.strides[2] // kw.itemsize == 33 and qp.strides[1] // qp.itemsize == 32
        got = np.asarray(B._attention_fwd(qp, kw, asfake(v), None, True, 0.2)[0])
    np.testing.assert_array_equal(got.view(np.uint16), base.view(np.uint16))


def test_bad_variants_are_refused_by_name():
    with pytest.raises(ValueError, match="dtype must be one of"):
        mma_program("float32", 64, 64)
    with pytest.raises(ValueError, match="head_dim must be one of .* got head_dim 48"):
        mma_program("bfloat16", 48, 48)
    with pytest.raises(ValueError, match="value_dim 32"):
        mma_program("float16", 64, 32)
    with pytest.raises(ValueError, match="attn_bwd_dq_mma takes head_dim in"):
        mma_program("bfloat16", 128, 128, "attn_bwd_dq_mma")
    with pytest.raises(ValueError, match="no kernel 'attn_nope'"):
        mma_program("bfloat16", 64, 64, "attn_nope")
    with pytest.raises(ValueError, match="attn_fwd_tf32: head_dim must be one of .* got head_dim 128"):
        tf32_program(128, 128)


_ALL = (
    [("attn_fwd_mma", dt, d, 1) for dt in DTYPES for d in HEAD_DIMS]
    + [("attn_fwd_mma", dt, d, 2) for dt in DTYPES for d in (32, 64)]
    + [(n, dt, d, 1) for n in ("attn_bwd_dq_mma", "attn_bwd_dkv_mma") for dt in DTYPES for d in BWD_HEAD_DIMS]
    + [(n, "float32", d, 1) for n in _kernel_source.ATTENTION_TF32 for d in TF32_HEAD_DIMS]
)
#: (kernel, dtype, head dim, m16 tiles per warp, extras): every variant without the
#: mask/dropout code, and with it at head dim 64 (the texts differ by one macro; the stand-in
#: runs both): 35 kernels, ~8 s of nvcc on 2 cores, so the default run builds each kernel and
#: dtype at head dim 64 and the forward's other head dims and tilings in bf16 (15);
#: BURN_CUDA_NVCC_ALL=1 builds all 35
VARIANTS = [(*v, False) for v in _ALL] + [(*v, True) for v in _ALL if v[2] == 64]
if os.environ.get("BURN_CUDA_NVCC_ALL") != "1":
    VARIANTS = [v for v in VARIANTS if v[2] == 64 and v[3] == 1 and (not v[4] or v[0] == "attn_fwd_mma")] + [
        v for v in VARIANTS if v[0] == "attn_fwd_mma" and v[1] == "bfloat16" and (v[2], v[3]) != (64, 1) and not v[4]
    ]


def _one_unit(variants) -> str:
    """Every variant's text in one translation unit: each in a namespace of its own, its entry
    renamed `{name}_{dtype}_{d}_{tiles}_{extras}` and its macros undefined after it (one nvcc run per
    unit: a run per kernel cost ~0.5 s each in process start and front end)."""
    parts = []
    for i, (name, dtype, d, tiles, extras) in enumerate(variants):
        options = {"extras": extras} | ({"tiles": tiles} if tiles > 1 else {})
        src = _kernel_source.SOURCES[name](dtype, d, d, **options)
        undef = "".join(f"#undef {m}\n" for m in sorted(set(re.findall(r"^#define (\w+)", src, re.M))))
        entry = f"{name}_{dtype}_{d}_{tiles}_{int(extras)}"
        parts.append(f"#define {name} {entry}\nnamespace v{i} {{\n{src}\n}}\n{undef}#undef {name}\n")
    return "".join(parts)


def test_every_mma_variant_compiles_with_nvcc(nvcc_ptx):
    from concurrent.futures import ThreadPoolExecutor

    halves = (VARIANTS[0::2], VARIANTS[1::2])  # two nvcc processes side by side (2 cores in CI)
    with ThreadPoolExecutor(2) as pool:
        built = list(pool.map(lambda i: nvcc_ptx(f"attn_mma_{i}", _one_unit(halves[i])), (0, 1)))
    entries = {}
    for proc, ptx in built:
        assert proc.returncode == 0, proc.stderr
        entries.update(re.findall(r"\.entry (\w+)\((.*?)(?=\.entry |\Z)", ptx.read_text(), re.S))
    for name, dtype, d, tiles, extras in VARIANTS:
        text = entries[f"{name}_{dtype}_{d}_{tiles}_{int(extras)}"]
        if dtype == "float32":  # 3 instructions per k8 step
            # forward, unrolled: S and P V, (keys / 8) (d / 8) steps each; backward, one 8-key
            # (8-query) step of the loop: S, dP, dQ (dV, dK), d / 8 steps each
            count = text.count("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32")
            steps = {"attn_fwd_tf32": 2 * d, "attn_bwd_dq_tf32": 3 * d // 8, "attn_bwd_dkv_tf32": 4 * d // 8}
            assert count == 3 * steps[name], (name, d, count)
            assert "cvt.rna.tf32.f32" in text
            continue
        t = {"bfloat16": "bf16", "float16": "f16"}[dtype]
        # per 64 x 64 tile: S (keys / 8) (d / 16) and P V (keys / 16) (d / 8) = d / 2 each,
        # unrolled; the dQ pass S, dP, dQ; the dK/dV pass S, dP, dV, dK
        products = {"attn_fwd_mma": 2, "attn_bwd_dq_mma": 3, "attn_bwd_dkv_mma": 4}[name]
        count = text.count(f"mma.sync.aligned.m16n8k16.row.col.f32.{t}.{t}.f32")
        # the backward's loop over SUB keys (queries) of a tile stays rolled
        rolled = 1 if name == "attn_fwd_mma" else KEYS // SUB
        assert count * rolled == tiles * products * d // 2, (name, dtype, d, tiles, count)
        assert f"cvt.rn.{t}x2.f32" in text, (name, dtype, d)
