"""The pass-through (issue 35: Fusion never slower than its inner backend): an op that ran as a
one-op plan twice after the same op with the same shapes is no longer recorded, its inner op
runs at once; ops that fuse keep fusing; results are the same either way."""

from __future__ import annotations

import numpy as np
import pytest
from _fusion_testlib import inner_backend
from burn_fusion import Fusion, _stream
from burn_tensor import Tensor


def _device():
    return Fusion(inner_backend()).device()


def _delta(device, before: dict) -> dict:
    after = device.fusion_stats()
    return {k: after[k] - before[k] for k in after}


def _linear_relu_chain(x, w, b, steps):
    """What a linear layer does: matmul (delegated, flushes), then a lone bias add read by the
    next matmul: the add is a one-op plan every time."""
    out = []
    for _ in range(steps):
        h = x.matmul(w) + b  # the add runs alone: the next matmul reads it at once
        out.append(h.matmul(w).numpy())
    return out


def test_an_op_that_runs_alone_passes_through_after_two_plans():
    device = _device()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 8)).astype(np.float32)
    wv = rng.standard_normal((8, 8)).astype(np.float32)
    bv = rng.standard_normal((1, 8)).astype(np.float32)
    x, w, b = (Tensor.from_data(v, device) for v in (a, wv, bv))
    device.sync()
    before = device.fusion_stats()
    got = _linear_relu_chain(x, w, b, 5)
    d = _delta(device, before)
    # The key's context is the op recorded before: none at step 1, the previous add after it.
    # Steps 2 and 3 teach (add after add, alone twice); steps 4 and 5 pass through.
    assert d["ops_recorded"] == 3, d
    assert d["ops_passed_through"] == 2, d
    ref = ((a @ wv + bv) @ wv).astype(np.float64)
    for g in got:
        np.testing.assert_allclose(g, ref, rtol=1e-5, atol=1e-5)


def test_ops_that_fuse_are_never_passed_through():
    device = _device()
    v = np.linspace(-1.0, 1.0, 64, dtype=np.float32)
    x = Tensor.from_data(v, device)
    device.sync()
    before = device.fusion_stats()
    for _ in range(5):
        got = ((x * 2.0 + 1.0).exp() - x).numpy()
    d = _delta(device, before)
    assert d["ops_passed_through"] == 0, d
    assert d["kernels_launched"] == 5, d  # one fused kernel per chain, every time
    np.testing.assert_allclose(got, np.exp(v * 2.0 + 1.0) - v, rtol=1e-5)


def test_pass_through_off_records_every_op_with_the_same_results(monkeypatch):
    device = _device()
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 8)).astype(np.float32)
    wv = rng.standard_normal((8, 8)).astype(np.float32)
    bv = rng.standard_normal((1, 8)).astype(np.float32)
    x, w, b = (Tensor.from_data(v, device) for v in (a, wv, bv))
    on = _linear_relu_chain(x, w, b, 4)
    monkeypatch.setattr(_stream, "PASS_THROUGH", False)
    fresh = Fusion(inner_backend()).device()  # interned: the same streams, so clear the keys
    for st in fresh.backend._streams.values():
        st.solo.clear()
        st.seen_alone.clear()
    x, w, b = (Tensor.from_data(v, fresh) for v in (a, wv, bv))
    fresh.sync()
    before = fresh.fusion_stats()
    off = _linear_relu_chain(x, w, b, 4)
    d = _delta(fresh, before)
    assert d["ops_passed_through"] == 0 and d["ops_recorded"] == 4, d
    for p, q in zip(on, off):
        np.testing.assert_array_equal(p, q)


def test_a_lone_reduction_of_a_ready_tensor_passes_through():
    """The bias gradients of a backward pass: `sum_dim` of a ready tensor, read at once by a
    delegated op, is a one-node plan each time; from the third time it runs on the inner
    backend directly."""
    device = _device()
    rng = np.random.default_rng(2)
    a = rng.standard_normal((16, 8)).astype(np.float32)
    wv = rng.standard_normal((8, 4)).astype(np.float32)
    x, w = Tensor.from_data(a, device), Tensor.from_data(wv, device)
    (x * 1.0).numpy()  # the context of the first reduction: a multiply, whatever ran before
    before = device.fusion_stats()
    got = [x.sum_dim(0).matmul(w).numpy() for _ in range(5)]
    d = _delta(device, before)
    assert d["ops_passed_through"] == 2, d  # 1st: after mul; 2nd, 3rd teach; 4th, 5th pass
    ref = a.astype(np.float64).sum(0, keepdims=True) @ wv
    for g in got:
        np.testing.assert_allclose(g, ref, rtol=1e-5, atol=1e-5)


def test_a_one_op_plan_runs_the_inner_op_without_a_generated_kernel():
    # (mutation run) one recorded op is run by the inner backend's own kernel: no compile
    device = Fusion(inner_backend()).device()
    a = np.arange(8, dtype=np.float32)
    x = Tensor.from_data(a, device)
    device.sync()
    before = device.fusion_stats()
    y = x * 2.0
    np.testing.assert_allclose(y.numpy(), a * 2.0)
    d = _delta(device, before)
    assert d["plans_run_unfused"] == 1 and d["kernels_compiled"] == 0, d


def test_a_failing_one_op_plan_leaves_a_result_that_says_so():
    # (mutation run) the inner op of a one-op plan raises: the error reaches the caller, and the
    # pending result is marked, so reading it raises clearly instead of running the op again
    device = Fusion(inner_backend()).device()
    x = Tensor.from_data(np.arange(8, dtype=np.float32), device)
    device.sync()
    inner = device.backend.inner
    calls = []

    def broken(*args):
        calls.append(args)
        raise RuntimeError("inner op failed")

    y = x * 2.0
    object.__setattr__(inner, "float_mul_scalar", broken)  # backends are immutable objects
    try:
        with pytest.raises(RuntimeError, match="inner op failed"):
            y.numpy()
    finally:
        object.__delattr__(inner, "float_mul_scalar")
    with pytest.raises(Exception) as again:
        y.numpy()
    assert "inner op failed" not in str(again.value)
    assert len(calls) == 1


def test_lone_ops_after_a_different_op_learn_to_pass_through():
    # (mutation run) the key's context is the previous op, here another kind of op: an add after
    # a mul and a mul after an add each run alone twice, then pass through
    device = _device()
    rng = np.random.default_rng(1)
    a, wv = (rng.standard_normal((8, 8)).astype(np.float32) for _ in range(2))
    x, w = (Tensor.from_data(v, device) for v in (a, wv))
    device.sync()
    before = device.fusion_stats()
    got = []
    for _ in range(5):
        h = x.matmul(w) + 1.0  # a lone add (the matmul reads it at once)
        got.append((h.matmul(w) * 2.0).matmul(w).numpy())  # a lone mul after the add
    d = _delta(device, before)
    assert d["ops_passed_through"] >= 4, d
    ref = (((a @ wv + 1.0) @ wv) * 2.0) @ wv
    for g in got:
        np.testing.assert_allclose(g, ref, rtol=1e-4, atol=1e-4)
