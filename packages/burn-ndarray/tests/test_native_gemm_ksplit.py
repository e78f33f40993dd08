"""The tiled GEMM's K chunks (`_native_gemm.plan`, `gemm.c`): a product whose tiles would be
cut small runs over chunks of K into a workspace, added in order after. Against float64
references (matmul over layouts and a batch, linear with its bias and both gradients, a K that
does not divide), bitwise equal for 1/2/4 threads, and the plan from the shapes only.

The transformer's chunked products (a batch-32 weight gradient, [512, 4096] @ [4096, 512]) take
~0.1 s each; here `TASK_MACS` and `KSPLIT_MIN_K` are lowered so that small products chunk."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray, _native, _native_gemm
from burn_ndarray._native_gemm import KSPLIT_MIN_K, MAX_TASKS, MIN_TILE, TILE_ALIGN, plan

needs_native = pytest.mark.skipif(_native.lib() is None, reason="no native kernels here")


@pytest.fixture
def small_chunks(monkeypatch):
    """Products of ~10^6 multiply-adds get 16+ tasks, K chunks of 64 products and up."""
    monkeypatch.setattr(_native_gemm, "TASK_MACS", 1 << 16)
    monkeypatch.setattr(_native_gemm, "KSPLIT_MIN_K", 64)
    monkeypatch.setattr(_native_gemm, "KSPLIT_EDGE", 256)


def _t(a):
    return np.ascontiguousarray(np.swapaxes(a, -1, -2)).swapaxes(-1, -2)


def _rel(got, want):
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))


def _chunks(batch, m, n, k):
    tm, tn, kc = plan(batch, m, n, k)
    return -(-k // kc)


def test_plan_chunks_k_only_where_the_tiles_would_be_small():
    assert plan(1, 512, 512, 4096) == (256, 256, 1024)  # batch-32 weight gradient: 4 x 4 tasks
    assert plan(1, 512, 2048, 4096) == (256, 256, 2048)
    assert plan(1, 4096, 512, 512) == (256, 512, 512)  # K too short to cut
    assert plan(1, 4096, 2048, 512)[2] == 512
    assert plan(1, 8, 8, 8) == (8, 8, 8)
    assert plan(1, 512, 512, 0)[2] == 0
    for batch, m, n, k in [(1, 512, 512, 4096), (1, 300, 5000, 9000), (4, 700, 130, 6000)]:
        tm, tn, kc = plan(batch, m, n, k)
        ks = -(-k // kc)
        for edge, whole in ((tm, m), (tn, n)):  # a cut edge: aligned, at least MIN_TILE
            assert edge == whole or (edge % TILE_ALIGN == 0 and edge >= MIN_TILE)
        assert kc >= KSPLIT_MIN_K and (ks - 1) * kc < k
        assert batch * -(-m // tm) * -(-n // tn) * ks <= MAX_TASKS


@needs_native
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["c", "tx", "ty", "both"])
def test_chunked_matmul_against_float64(small_chunks, dtype, layout):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 150, 1000)).astype(dtype)
    y = rng.standard_normal((2, 1000, 170)).astype(dtype)
    assert _chunks(2, 150, 170, 1000) > 1
    xx = _t(x) if layout in ("tx", "both") else x
    yy = _t(y) if layout in ("ty", "both") else y
    got = NdArray(float_dtype=np.dtype(dtype).name, num_threads=2).float_matmul(xx, yy)
    want = np.matmul(x.astype(np.float64), y.astype(np.float64))
    assert got.shape == want.shape and got.dtype == dtype
    assert _rel(got, want) < (2e-6 if dtype == np.float32 else 1e-13)


@needs_native
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_chunked_linear_and_gradients_against_float64(small_chunks, dtype):
    rng = np.random.default_rng(6)
    nd = NdArray(float_dtype=np.dtype(dtype).name, num_threads=2)
    x = rng.standard_normal((3, 170, 900)).astype(dtype)  # 510 rows
    w = rng.standard_normal((900, 260)).astype(dtype)
    b = rng.standard_normal(260).astype(dtype)
    g = rng.standard_normal((3, 170, 260)).astype(dtype)
    assert _chunks(1, 510, 260, 900) > 1  # linear: K = 900
    assert _chunks(1, 900, 260, 510) > 1  # weight gradient: K = the 510 rows
    x64, w64, b64, g64 = (a.astype(np.float64) for a in (x, w, b, g))
    tol = 2e-6 if dtype == np.float32 else 1e-13
    assert _rel(nd.linear(x, w, b), x64 @ w64 + b64) < tol
    assert _rel(nd.linear_x_backward(w, g), g64 @ w64.T) < tol
    want_w = x64.reshape(-1, 900).T @ g64.reshape(-1, 260)
    assert _rel(nd.linear_weight_backward(x, g), want_w) < tol


@needs_native
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_chunked_results_bitwise_equal_for_1_2_4_threads(small_chunks, dtype):
    rng = np.random.default_rng(7)
    name = np.dtype(dtype).name
    x = rng.standard_normal((2, 200, 1001)).astype(dtype)
    y = rng.standard_normal((2, 1001, 150)).astype(dtype)
    w = rng.standard_normal((1001, 150)).astype(dtype)
    b = rng.standard_normal(150).astype(dtype)
    g = rng.standard_normal((2, 200, 150)).astype(dtype)
    results = []
    for t in (1, 2, 4):
        nd = NdArray(float_dtype=name, num_threads=t)
        results.append((nd.float_matmul(x, y), nd.float_matmul(_t(x), y), nd.linear(x, w, b),
                        nd.linear_weight_backward(x, g)))  # fmt: skip
    for other in results[1:]:
        for a, c in zip(results[0], other):
            assert a.tobytes() == c.tobytes()
