"""Attention's launch plans (`_attention_plan.py`) on the CPU stand-in: a call replayed from the
plan its second call of the same key recorded launches the same kernels on the same grids with
the same scalar parameters (the stand-in decodes them from the parameter bytes) and gives the
same bits, which match numpy float64; calls a plan must not serve (an unaligned view, a switch
flipped after the plan was kept, aliased inputs when recorded) take the general path."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu
from burn_autodiff import Autodiff
from burn_cuda import _attention_plan, _kernel_source
from burn_tensor import Tensor, module
from cpu_backend import cuda_on_cpu_backend
from fake_cupy import FakeCupy, asfake
from test_attention_cpu import reference

ml_dtypes = pytest.importorskip("ml_dtypes")
needs_gxx = pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed")
#: the plans these tests record are the mma.sync forward's (the wgmma one: test_attention_wgmma_cpu)
pytestmark = pytest.mark.usefixtures("mma_sync_forward")
BF16 = np.dtype(ml_dtypes.bfloat16)


def _attention_launches(cp, start: int) -> list:
    """The attention kernels' launches since `start` (name, grid, block and decoded scalars)."""
    return [x for x in cp.launches[start:] if x.name in _kernel_source.SIZED]


def _step(dev, arrays, dtype, causal, dropout, mask=None):
    """Forward and backward of `module.attention` (seed 3): out, dq, dk, dv as float64."""
    dev.seed(3)
    q, k, v, g = (Tensor.from_data(a, dev).cast(dtype) for a in arrays)
    q, k, v = (t.require_grad() for t in (q, k, v))
    m = None if mask is None else Tensor.from_data(mask, dev)
    out = module.attention(q, k, v, mask=m, causal=causal, dropout=dropout)
    grads = (out * g).sum().backward()
    res = [out] + [t.grad(grads) for t in (q, k, v)]
    return [np.asarray(t.cast("float32").into_data().array, np.float64) for t in res]


CASES = [
    # (dtype, head dim, causal, dropout, mask shape): the routes a plan records
    ("float32", 64, False, 0.0, None),  # 3xTF32 forward and backward
    ("float32", 32, True, 0.1, None),  # ... with causal and dropout (the seed words per call)
    ("bfloat16", 64, True, 0.0, (1, 1, 40, 40)),  # tensor-core forward and backward, a mask
    ("bfloat16", 128, False, 0.1, None),  # tensor-core forward, burn_gpu's backward kernels
    ("float32", 16, True, 0.0, (1, 2, 1, 40)),  # burn_gpu's kernels only, key padding mask
]


@needs_gxx
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_a_replayed_call_launches_and_gives_what_the_recorded_one_did(case):
    dtype, d, causal, dropout, mask_shape = case
    rng = np.random.default_rng(d)
    arrays = [rng.standard_normal((1, 2, 40, d)).astype(np.float32) for _ in range(4)]
    mask = None if mask_shape is None else rng.random(mask_shape) < 0.3
    with cuda_on_cpu_backend(FakeCupy(), float_dtype="float32") as (B, cp):
        dev = Autodiff(B).device()
        first = _step(dev, arrays, dtype, causal, dropout, mask)  # marks the keys seen
        assert not any(_attention_plan._PLANS.values())
        mark = len(cp.launches)
        _step(dev, arrays, dtype, causal, dropout, mask)  # records the plans
        recorded = _attention_launches(cp, mark)
        plans = [p for p in _attention_plan._PLANS.values() if p]
        mark = len(cp.launches)
        again = _step(dev, arrays, dtype, causal, dropout, mask)
        replayed = _attention_launches(cp, mark)
    assert len(plans) == 2  # the forward's and the backward's
    assert replayed == recorded and len(recorded) >= 3
    for name, a, b in zip(("out", "dq", "dk", "dv"), first, again):
        np.testing.assert_array_equal(a, b, err_msg=name)
    if dropout:  # the keep mask's values: test_attention_cpu's dropout tests
        return
    r = [a.astype(BF16).astype(np.float64) if dtype == "bfloat16" else a for a in arrays]
    want = reference(*r[:3], mask, causal, 1 / math.sqrt(d), r[3])
    tol = 2e-5 if dtype == "float32" else 5e-2
    for name, a, w in zip(("out", "dq", "dk", "dv"), again, want):
        np.testing.assert_allclose(a, w, rtol=tol, atol=tol, err_msg=name)


@needs_gxx
def test_an_unaligned_view_takes_the_general_path_and_the_same_values(monkeypatch):
    """The tensor-core kernels read 16 bytes at a time: an input at an address 2 bytes off
    (same shape and strides, so the same key) is copied by the general path, as before."""
    rng = np.random.default_rng(1)
    shape = (1, 1, 24, 32)
    n = int(np.prod(shape))
    flat = rng.standard_normal(n + 1).astype(BF16)
    with cuda_on_cpu_backend(FakeCupy()) as (B, cp):
        whole = asfake(flat)
        aligned = asfake(flat[1:]).reshape(shape)
        shifted = whole[1:].reshape(shape)  # the same values, 2 bytes past a 16-byte boundary
        assert shifted.data.ptr % 16 and not aligned.data.ptr % 16
        k, v = (asfake(rng.standard_normal(shape).astype(BF16)) for _ in range(2))
        # seen, then unaligned at the call that would record: no recording (its copy would
        # leave the key without a plan), then aligned: recorded and replayed, then unaligned
        order = (aligned, shifted, aligned, aligned, shifted)
        outs = [B.attention_with_lse(q, k, v, None, False, 0.2)[0] for q in order]
        assert any(_attention_plan._PLANS.values())
        got = [np.asarray(a).astype(np.float64) for a in outs]
    for g in got[1:]:
        np.testing.assert_array_equal(got[0], g)


@needs_gxx
def test_a_switch_flipped_after_a_plan_was_kept_is_obeyed(monkeypatch):
    q, k, v = (asfake(np.ones((1, 1, 20, 64), BF16)) for _ in range(3))
    with cuda_on_cpu_backend(FakeCupy()) as (B, cp):
        for _ in range(3):
            B.attention_with_lse(q, k, v, None, False, 0.125)
        assert any(_attention_plan._PLANS.values())
        monkeypatch.setenv("BURN_CUDA_ATTENTION_MMA", "0")
        B.attention_with_lse(q, k, v, None, False, 0.125)
        names = [x.name for x in _attention_launches(cp, 0)]
    assert names == ["attn_fwd_mma"] * 3 + ["attn_fwd_tiled"]


@pytest.mark.parametrize(
    "switch",
    ["BURN_GPU_ATTENTION", "BURN_CUDA_ATTENTION_MMA", "BURN_CUDA_ATTENTION_WARP_ROWS",
     "BURN_CUDA_ATTENTION_PIPE", "BURN_CUDA_ATTENTION_SPLIT_OUT",
     "BURN_CUDA_ATTENTION_FUSED_BWD"],
)  # fmt: skip
def test_every_kernel_switch_is_part_of_the_plan_key(monkeypatch, switch):
    # a plan replays the kernels it recorded: a switch that picks other kernels (or another
    # text of the same kernel, as PIPE does) must give another key, or the A/B benches that
    # flip it in one process would time the recorded kernels twice
    q = asfake(np.ones((1, 1, 20, 64), BF16))
    monkeypatch.delenv(switch, raising=False)
    before = _attention_plan.key_of(_attention_plan.FORWARD, (q, q, q, None), (False, 0.1, 0))
    monkeypatch.setenv(switch, "0")
    after = _attention_plan.key_of(_attention_plan.FORWARD, (q, q, q, None), (False, 0.1, 0))
    assert before is not None and after is not None and before != after


@needs_gxx
def test_aliased_inputs_keep_no_plan_and_distinct_ones_replay_theirs():
    """Self-attention on one array (query, key and value the same object) gives the recording
    no way to tell the roles apart: no plan is kept; distinct arrays of that key then record
    one, which then serves the aliased call too (its roles are by position), with the same
    bits."""
    x = np.random.default_rng(2).standard_normal((1, 1, 16, 32)).astype(np.float32)
    with cuda_on_cpu_backend(FakeCupy()) as (B, cp):
        a = asfake(x)
        first = [np.asarray(B.attention_with_lse(a, a, a, None, True, 0.3)[0]) for _ in range(3)]
        assert not any(_attention_plan._PLANS.values())
        q, k, v = (asfake(x) for _ in range(3))
        outs = [np.asarray(B.attention_with_lse(q, k, v, None, True, 0.3)[0]) for _ in range(2)]
        assert any(_attention_plan._PLANS.values())
        outs.append(np.asarray(B.attention_with_lse(a, a, a, None, True, 0.3)[0]))  # by the plan
    want = reference(*(x.astype(np.float64),) * 3, None, True, 0.3, np.zeros(x.shape))[0]
    for got in first[1:] + outs:
        np.testing.assert_array_equal(got, first[0])
    np.testing.assert_allclose(first[0], want, rtol=2e-5, atol=2e-5)


@needs_gxx
def test_plans_are_per_thread_and_absent_without_the_driver_launcher():
    """A plan's parameter blocks are its thread's (the driver reads them during the launch):
    another thread's calls of the same shapes record their own and give the same bits; with
    cupy's RawKernel call as the launcher (no `with_params`) no plan is kept."""
    import threading

    x = np.random.default_rng(4).standard_normal((3, 1, 2, 24, 32)).astype(np.float32)
    with cuda_on_cpu_backend(FakeCupy()) as (B, cp):
        q, k, v = (asfake(a) for a in x)

        def calls(out):
            out += [np.asarray(B.attention_with_lse(q, k, v, None, True, 0.2)[0]) for _ in range(3)]

        here, there = [], []
        calls(here)
        t = threading.Thread(target=calls, args=(there,))
        t.start()
        t.join()
        threads = {key[4] for key, p in _attention_plan._PLANS.items() if p}  # key_of: [4] thread
    assert len(threads) == 2 and len(there) == 3
    with cuda_on_cpu_backend(FakeCupy(driver=False)) as (B, cp):
        q, k, v = (asfake(a) for a in x)
        raw = [np.asarray(B.attention_with_lse(q, k, v, None, True, 0.2)[0]) for _ in range(3)]
        assert not any(_attention_plan._PLANS.values())
    for got in here[1:] + there + raw:
        np.testing.assert_array_equal(got, here[0])


@needs_gxx
def test_the_plans_switch_keeps_every_call_on_the_general_path(monkeypatch):
    """BURN_CUDA_ATTENTION_PLANS=0 (an A/B of the host cost): no plan, the same bits."""
    x = np.random.default_rng(6).standard_normal((3, 1, 1, 20, 64)).astype(np.float32)
    outs = []
    for flag in ("1", "0"):
        monkeypatch.setenv("BURN_CUDA_ATTENTION_PLANS", flag)
        with cuda_on_cpu_backend(FakeCupy()) as (B, cp):
            q, k, v = (asfake(a) for a in x)
            for _ in range(3):
                outs.append(np.asarray(B.attention_with_lse(q, k, v, None, False, 0.125)[0]))
            assert any(_attention_plan._PLANS.values()) == (flag == "1")
    for got in outs[1:]:
        np.testing.assert_array_equal(got, outs[0])


@needs_gxx
def test_replayed_dropout_draws_a_new_mask_per_call_as_the_general_path_does(monkeypatch):
    """A plan keeps the seed words' array as an input, not its recorded value: consecutive
    replays (no reseed between them) drop different weights, each call the same bits as the
    general path's call at the same point of the generator."""
    x = np.random.default_rng(8).standard_normal((3, 1, 2, 24, 32)).astype(np.float32)
    runs = {}
    for flag in ("1", "0"):
        monkeypatch.setenv("BURN_CUDA_ATTENTION_PLANS", flag)
        with cuda_on_cpu_backend(FakeCupy(), float_dtype="float32") as (B, cp):
            dev = B.device()
            dev.seed(5)
            q, k, v = (Tensor.from_data(a, dev) for a in x)
            runs[flag] = [
                module.attention(q, k, v, dropout=0.5).into_data().array.astype(np.float64)
                for _ in range(5)
            ]
            assert any(_attention_plan._PLANS.values()) == (flag == "1")
    planned, general = runs["1"], runs["0"]
    for i, (a, b) in enumerate(zip(planned, general)):
        np.testing.assert_array_equal(a, b, err_msg=f"call {i}")
    for a, b in zip(planned[2:], planned[3:]):  # the replays: a fresh mask each
        assert not np.array_equal(a, b)
