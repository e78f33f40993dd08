"""The fused (one-pass) tensor-core attention backward (`_attention_fused_bwd.py`,
`BURN_CUDA_ATTENTION_FUSED_BWD=1`) on the CPU stand-in: its launches (Delta and the zeroed dQ
accumulator, the pass per key block, the dQ rounding for 16-bit types), dQ, dK and dV against
numpy float64 and against the two-pass kernels (dK and dV the same bits: the same products in the
same order; dQ within the existing tests' tolerances: its sum over key blocks runs through a
float32 accumulator), over float32, bfloat16 and float16, head dims 32 and 64, ragged seq
lengths, causal or not, Bool masks, dropout and head-split inputs; and a launch plan recorded and
replayed with the switch on. The stand-in's new arrays hold 0xFF bytes (NaN floats), so a dQ
accumulator the prep kernel did not zero fails. GPU runs: test_attention_fused_bwd_gpu.py."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu
from burn_autodiff import Autodiff
from burn_cuda import _attention_plan, _kernel_source
from burn_tensor.ops import attention_keep_mask as keep_mask
from cpu_backend import cuda_on_cpu_backend
from fake_cupy import FakeCupy, asfake
from test_attention_cpu import reference
from test_attention_plan_cpu import _attention_launches, _step

ml_dtypes = pytest.importorskip("ml_dtypes")
pytestmark = [
    pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed"),
    pytest.mark.usefixtures("mma_sync_backward"),  # the fused mma.sync kernels, not sm_90's
]
NP = {"bfloat16": np.dtype(ml_dtypes.bfloat16), "float16": np.dtype(np.float16),
      "float32": np.dtype(np.float32)}  # fmt: skip
TOL = {"bfloat16": 5e-2, "float16": 8e-3, "float32": 2e-5}  # test_attention_mma_cpu's (masks)
BITS = {2: np.uint16, 4: np.uint32}
WORDS = np.array([123457, -98765], np.int32)  # the dropout's seed words
FUSED = {"mma": ["attn_bwd_prep_mma", "attn_bwd_fused_mma", "attn_bwd_dqcvt_mma"],
         "tf32": ["attn_bwd_prep_tf32", "attn_bwd_fused_tf32"]}  # fmt: skip

CASES = [
    # (dtype, b, h, sq, sk, d, causal, mask shape, dropout, head-split inputs)
    ("bfloat16", 1, 2, 70, 130, 64, True, None, 0.0, False),  # 3 key blocks, 3 query tiles
    ("bfloat16", 2, 1, 130, 70, 32, False, (2, 1, 1, 70), 0.3, False),  # key padding, dropout
    ("bfloat16", 2, 2, 40, 70, 64, False, (2, 2, 40, 70), 0.0, True),  # head-split, full mask
    ("float16", 1, 2, 70, 130, 32, False, None, 0.0, True),
    ("float16", 2, 2, 130, 70, 64, True, (2, 2, 130, 70), 0.2, False),  # rows that see no key
    ("float32", 1, 2, 70, 130, 64, False, None, 0.0, False),  # 3xTF32
    ("float32", 2, 1, 70, 130, 32, True, (2, 1, 70, 130), 0.1, True),
    ("float32", 1, 2, 130, 70, 64, True, None, 0.5, False),
]


def _arrays(dtype, b, h, sq, sk, d, split, seed):
    """Q, K, V, dO as numpy [b, h, s, d] (`split`: views of [b, s, h, d] memory, MHA's heads)."""
    rng = np.random.default_rng(seed)
    out = []
    for s in (sq, sk, sk, sq):
        if split:
            x = rng.standard_normal((b, s, h, d)).astype(np.float32).astype(NP[dtype])
            out.append(x.swapaxes(1, 2))
        else:
            out.append(rng.standard_normal((b, h, s, d)).astype(np.float32).astype(NP[dtype]))
    return out


def _fake(a):
    """`a` on the stand-in in its own layout (a head-split view stays one)."""
    if a.flags.c_contiguous:
        return asfake(a)
    return asfake(np.ascontiguousarray(a.transpose(0, 2, 1, 3))).transpose(0, 2, 1, 3)


def bits(a) -> np.ndarray:
    a = np.ascontiguousarray(np.asarray(a))
    return a.view(BITS.get(a.itemsize, a.dtype))


def _backward_both_ways(case, monkeypatch):
    """(out, fused (dq, dk, dv), two-pass (dq, dk, dv), the backward launches of each, the
    host inputs) of one forward and both backwards from its statistic."""
    dtype, b, h, sq, sk, d, causal, mshape, p, split = case
    monkeypatch.setenv("BURN_CUDA_ATTENTION_PLANS", "0")  # each call by the general path
    arrays = _arrays(dtype, b, h, sq, sk, d, split, sq + sk + d)
    rng = np.random.default_rng(d)
    mask = None if mshape is None else rng.uniform(size=mshape) < 0.3
    if mask is not None and mshape[2] > 1:
        mask[:, :, 3] = True  # a row that sees no key
    scale = 1 / math.sqrt(d)
    runs, names = {}, {}
    with cuda_on_cpu_backend(FakeCupy(), float_dtype=dtype) as (B, cp):
        q, k, v, g = (_fake(a) for a in arrays)
        m = None if mask is None else asfake(mask)
        seed = asfake(WORDS) if p else None
        out, lse = B.attention_with_lse(q, k, v, m, causal, scale, p, seed)
        for flag in ("1", "0"):
            monkeypatch.setenv("BURN_CUDA_ATTENTION_FUSED_BWD", flag)
            mark = len(cp.launches)
            grads = B.attention_lse_backward(q, k, v, out, lse, m, g, causal, scale, p, seed)
            names[flag] = [x.name for x in _attention_launches(cp, mark)]
            for name, a, x in zip(("dq", "dk", "dv"), grads, (q, k, v)):
                assert a.shape == x.shape, name
                if split:  # each gradient in its input's head-split layout
                    assert a.swapaxes(1, 2).flags.c_contiguous, name
            runs[flag] = [np.asarray(a).copy() for a in grads]
        out = np.asarray(out).astype(np.float64)
    return out, runs["1"], runs["0"], names, arrays, mask


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_fused_backward_matches_float64_and_the_two_pass_kernels(case, monkeypatch):
    dtype, b, h, sq, sk, d, causal, mshape, p, split = case
    out, fused, two, names, arrays, mask = _backward_both_ways(case, monkeypatch)
    kind = "tf32" if dtype == "float32" else "mma"
    assert names["1"] == FUSED[kind]
    assert names["0"] == [f"attn_bwd_dq_{kind}", f"attn_bwd_dkv_{kind}"]
    for name, a, t in zip(("dk", "dv"), fused[1:], two[1:]):  # the dK/dV pass's arithmetic
        np.testing.assert_array_equal(bits(a), bits(t), err_msg=name)
    tol = TOL[dtype]
    np.testing.assert_allclose(fused[0].astype(np.float64), two[0].astype(np.float64),
                               rtol=tol, atol=tol, err_msg="dq")  # fmt: skip
    z = keep_mask(WORDS, p, b, h, sq, sk) / (1 - p) if p else None
    r = [a.astype(np.float64) for a in arrays]
    want = reference(*r[:3], mask, causal, 1 / math.sqrt(d), r[3], z)
    np.testing.assert_allclose(out, want[0], rtol=tol, atol=tol, err_msg="out")
    for name, a, w in zip(("dq", "dk", "dv"), fused, want[1:]):
        np.testing.assert_allclose(a.astype(np.float64), w, rtol=tol, atol=tol, err_msg=name)


def test_fused_dq_is_tight_against_the_two_pass_dq(monkeypatch):
    """dQ's only difference is where float32 rounds (per key block, then the accumulator): a
    few float32 ulps before the output rounding, far inside the tolerances above."""
    case = ("float32", 1, 2, 70, 130, 64, True, None, 0.0, False)
    _, fused, two, _, arrays, _ = _backward_both_ways(case, monkeypatch)
    np.testing.assert_allclose(fused[0], two[0], rtol=1e-5, atol=2e-6)


PLAN_CASES = [
    # (dtype, head dim, causal, dropout, mask shape)
    ("bfloat16", 64, True, 0.0, (1, 1, 40, 40)),
    ("float16", 32, False, 0.1, None),
    ("float32", 32, True, 0.1, None),
]


@pytest.mark.parametrize("case", PLAN_CASES, ids=[str(c) for c in PLAN_CASES])
def test_a_replayed_fused_backward_launches_and_gives_what_the_recorded_one_did(
    case, monkeypatch
):
    """module.attention under Autodiff with the switch on: the second call records the fused
    launches (the accumulator's allocation and zeroing included), the third replays them: the
    same kernels, grids and scalars, the same bits."""
    dtype, d, causal, dropout, mask_shape = case
    monkeypatch.setenv("BURN_CUDA_ATTENTION_FUSED_BWD", "1")
    rng = np.random.default_rng(d)
    arrays = [rng.standard_normal((1, 2, 40, d)).astype(np.float32) for _ in range(4)]
    mask = None if mask_shape is None else rng.random(mask_shape) < 0.3
    with cuda_on_cpu_backend(FakeCupy(), float_dtype="float32") as (B, cp):
        dev = Autodiff(B).device()
        first = _step(dev, arrays, dtype, causal, dropout, mask)
        mark = len(cp.launches)
        _step(dev, arrays, dtype, causal, dropout, mask)  # records the plans
        recorded = _attention_launches(cp, mark)
        plans = [p for p in _attention_plan._PLANS.values() if p]
        mark = len(cp.launches)
        again = _step(dev, arrays, dtype, causal, dropout, mask)
        replayed = _attention_launches(cp, mark)
    kind = "tf32" if dtype == "float32" else "mma"
    assert len(plans) == 2  # the forward's and the backward's
    assert [x.name for x in recorded] == [f"attn_fwd_{kind}", *FUSED[kind]]
    assert replayed == recorded
    for name, a, b in zip(("out", "dq", "dk", "dv"), first, again):
        np.testing.assert_array_equal(a, b, err_msg=name)
    if dropout:
        return
    r = [a.astype(NP[dtype]).astype(np.float64) for a in arrays]
    want = reference(*r[:3], mask, causal, 1 / math.sqrt(d), r[3])
    for name, a, w in zip(("out", "dq", "dk", "dv"), again, want):
        np.testing.assert_allclose(a, w, rtol=TOL[dtype], atol=TOL[dtype], err_msg=name)


def test_fused_kernels_compile_with_nvcc(nvcc_ptx):
    """nvcc --ptx (sm_90) of every fused kernel at head dims 32 and 64, with and without the
    mask-and-dropout code: the accumulator takes `red.global.add.v2.f32`; the 16-bit pass holds
    per rolled SUB step S, dP, dV, dK (SUB D / 32 products) and per tile the dQ product
    ((KEYS / 16) (D / 16) products, unrolled), the dQ operands read by ldmatrix.trans."""
    from burn_cuda._attention_pipe_bwd import SUB

    variants = [(n, dt, d, x) for n in _kernel_source.ATTENTION_MMA_FUSED
                for dt in ("bfloat16", "float16") for d in (32, 64) for x in (False, True)]
    variants += [(n, "float32", d, x) for n in _kernel_source.ATTENTION_TF32_FUSED
                 for d in (32, 64) for x in (False, True)]  # fmt: skip
    unit = ""
    for i, (name, dt, d, x) in enumerate(variants):
        src = _kernel_source.SOURCES[name](dt, d, d, extras=x, pipe=True)
        macros = sorted(set(re.findall(r"^#define (\w+)", src, re.M)))
        undef = "".join(f"#undef {m}\n" for m in macros)
        entry = f"{name}_{dt}_{d}_{int(x)}"
        unit += f"#define {name} {entry}\nnamespace v{i} {{\n{src}\n}}\n{undef}#undef {name}\n"
    proc, ptx = nvcc_ptx("attn_fused", unit)
    assert proc.returncode == 0, proc.stderr
    entries = dict(re.findall(r"\.entry (\w+)\((.*?)(?=\.entry |\Z)", ptx.read_text(), re.S))
    for name, dt, d, x in variants:
        text = entries[f"{name}_{dt}_{d}_{int(x)}"]
        if "fused" in name:
            assert "red.global.add.v2.f32" in text, (name, dt, d)
        if name == "attn_bwd_fused_mma":
            t = {"bfloat16": "bf16", "float16": "f16"}[dt]
            count = text.count(f"mma.sync.aligned.m16n8k16.row.col.f32.{t}.{t}.f32")
            assert count == SUB * d // 32 + (64 // 16) * (d // 16), (dt, d, count)
            trans = text.count("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16")
            # dV and dK per rolled step, dS and K per tile
            assert trans == 2 * (SUB // 16) * (d // 16) + 4 + 4 * (d // 32), (dt, d, trans)


ROUTES = [
    # (BURN_CUDA_ATTENTION_FUSED_BWD, dtype, fused?)
    (None, "float32", True),  # the default: float32 fused, the half types two passes
    (None, "bfloat16", False),
    (None, "float16", False),
    ("1", "bfloat16", True),
    ("0", "float32", False),
]


@pytest.mark.parametrize("route", ROUTES, ids=[str(r) for r in ROUTES])
def test_default_backward_is_fused_for_float32_only(route, monkeypatch):
    """Which backward a call runs: float32 the fused kernels by default (faster on the H200),
    bfloat16/float16 the two passes (faster there); the switch forces either for every dtype."""
    flag, dtype, fused = route
    if flag is None:
        monkeypatch.delenv("BURN_CUDA_ATTENTION_FUSED_BWD", raising=False)
    else:
        monkeypatch.setenv("BURN_CUDA_ATTENTION_FUSED_BWD", flag)
    monkeypatch.setenv("BURN_CUDA_ATTENTION_PLANS", "0")  # each call by the general path
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal((1, 2, 40, 32)).astype(np.float32) for _ in range(4)]
    with cuda_on_cpu_backend(FakeCupy(), float_dtype="float32") as (B, cp):
        dev = Autodiff(B).device()
        mark = len(cp.launches)
        _step(dev, arrays, dtype, False, 0.0, None)
        names = [x.name for x in _attention_launches(cp, mark)]
    kind = "tf32" if dtype == "float32" else "mma"
    two_pass = [f"attn_bwd_dq_{kind}", f"attn_bwd_dkv_{kind}"]
    assert names == [f"attn_fwd_{kind}", *(FUSED[kind] if fused else two_pass)]
