"""NdArray's native attention (`_native/attn.c`): against the default decomposition in float64
for strided heads (a [b, s, h, d] buffer seen as [b, h, s, d]), broadcast masks, causal with
seq_q != seq_k, several key blocks; outputs in their inputs' memory order; the same bits for
1/2/4 threads; and no per-task Python (the finding: the Python-pool kernel's numpy calls queue
on the GIL with many threads)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from burn_ndarray import NdArray, _native
from burn_tensor import Backend

needs_native = pytest.mark.skipif(_native.lib() is None, reason="no native kernels here")


def _heads(b, s, h, d, dt, seed):
    """[b, h, s, d] views of a [b, s, h, d] buffer (the layout MultiHeadAttention produces)."""
    x = np.random.default_rng(seed).normal(size=(b, s, h, d)).astype(dt)
    return x.transpose(0, 2, 1, 3)


CASES = [  # b, h, sq, sk, d, dv
    (2, 3, 130, 130, 16, 16),
    (1, 2, 70, 600, 8, 12),  # two key blocks of the forward; seq_q < seq_k
    (1, 1, 300, 40, 4, 4),  # seq_q > seq_k: causal rows with nothing visible
]


@needs_native
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("masked", [False, True])
def test_native_equals_default_float64(case, causal, masked):
    b, h, sq, sk, d, dv = case
    be = NdArray(float_dtype="float64", num_threads=2)
    q, k = _heads(b, sq, h, d, np.float64, 0), _heads(b, sk, h, d, np.float64, 1)
    v = _heads(b, sk, h, dv, np.float64, 2)
    g = np.random.default_rng(3).normal(size=(b, h, sq, dv))
    mask = None
    if masked:  # a padding mask broadcast over heads and queries, one query row fully masked
        mask = np.zeros((b, 1, 1, sk), bool)
        mask[..., sk // 3 :] = True
        mask = np.broadcast_to(mask, (b, h, sq, sk)).copy()
        mask[:, :, 1] = True
    out = be.attention(q, k, v, mask, causal, 0.3)
    want = Backend.attention(be, q, k, v, mask, causal, 0.3)
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-13)
    got = be.attention_backward(q, k, v, mask, g, causal, 0.3)
    want = Backend.attention_backward(be, q, k, v, mask, g, causal, 0.3)
    for a, w in zip(got, want):
        assert a.shape == w.shape
        np.testing.assert_allclose(a, w, rtol=1e-10, atol=1e-12)


@needs_native
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("causal", [False, True])
def test_native_dropout_equals_default_float64(case, causal, monkeypatch):
    # issue 36: dropout on the weights inside the native kernels (the hash of
    # burn_tensor._attention_dropout), equal to the decomposition with the same seed words,
    # which is never reached (several key blocks, backward row blocks, masked rows)
    from burn_tensor._ops_attention import AttentionOps

    b, h, sq, sk, d, dv = case
    be = NdArray(float_dtype="float64", num_threads=2)
    q, k = _heads(b, sq, h, d, np.float64, 0), _heads(b, sk, h, d, np.float64, 1)
    v = _heads(b, sk, h, dv, np.float64, 2)
    g = np.random.default_rng(3).normal(size=(b, h, sq, dv))
    mask = np.zeros((b, 1, 1, sk), bool)
    mask[..., sk // 3 :] = True
    seed = np.array([271828, 314159], np.int64)
    want = Backend.attention(be, q, k, v, mask, causal, 0.3, 0.35, seed)
    want_grads = Backend.attention_backward(be, q, k, v, mask, g, causal, 0.3, 0.35, seed)

    def no_decomposition(*a):
        raise AssertionError("the decomposition ran")

    monkeypatch.setattr(AttentionOps, "_attention_probs", no_decomposition)
    np.testing.assert_allclose(be.attention(q, k, v, mask, causal, 0.3, 0.35, seed), want,
                               rtol=1e-12, atol=1e-13)  # fmt: skip
    got = be.attention_backward(q, k, v, mask, g, causal, 0.3, 0.35, seed)
    for a, w in zip(got, want_grads):
        np.testing.assert_allclose(a, w, rtol=1e-10, atol=1e-12)


@needs_native
def test_float32_close_to_float64_and_outputs_follow_input_layout():
    b, h, s, d = 2, 4, 128, 32
    q, k, v = (_heads(b, s, h, d, np.float32, i) for i in range(3))
    g = np.random.default_rng(4).normal(size=(b, h, s, d)).astype(np.float32)
    be, be64 = NdArray(), NdArray(float_dtype="float64")
    out = be.attention(q, k, v, None, True, 0.125)
    want = Backend.attention(be64, *(a.astype(np.float64) for a in (q, k, v)), None, True, 0.125)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)
    # q's heads were a transposed [b, s, h, d] buffer: so is the output (the swap back is a view)
    assert out.transpose(0, 2, 1, 3).flags.c_contiguous
    grads = be.attention_backward(q, k, v, None, g, True, 0.125)
    assert all(x.transpose(0, 2, 1, 3).flags.c_contiguous for x in grads)
    # contiguous [b, h, s, d] inputs give contiguous outputs
    qc = np.ascontiguousarray(q)
    assert be.attention(qc, k, v, None, False, 0.125).flags.c_contiguous


@needs_native
def test_bits_do_not_depend_on_threads():
    q, k, v = (_heads(2, 200, 4, 16, np.float32, i) for i in range(3))
    g = np.random.default_rng(5).normal(size=(2, 4, 200, 16)).astype(np.float32)
    runs = []
    for t in (1, 2, 4):
        be = NdArray(num_threads=t)
        runs.append((be.attention(q, k, v, None, True, 0.25),
                     *be.attention_backward(q, k, v, None, g, True, 0.25)))  # fmt: skip
    for other in runs[1:]:
        for a, w in zip(runs[0], other):
            assert a.tobytes() == w.tobytes()


@needs_native
def test_no_python_per_task():
    """Forward + backward of [2, 8, 256, 64] on one thread: a fixed few Python-level C calls
    (45 here: the ctypes calls and their arguments), not numpy calls per task (the Python-pool
    kernel made 227 here, growing with batch x heads), whose Python parts each take the GIL."""
    be = NdArray(num_threads=1)
    q, k, v = (_heads(2, 256, 8, 64, np.float32, i) for i in range(3))
    g = np.ones((2, 8, 256, 64), np.float32)
    be.attention(q, k, v, None, False, 0.125)  # first call: the GEMM look-up
    calls = [0]

    def hook(frame, event, arg):
        if event == "c_call":
            calls[0] += 1

    sys.setprofile(hook)
    try:
        be.attention(q, k, v, None, False, 0.125)
        be.attention_backward(q, k, v, None, g, False, 0.125)
    finally:
        sys.setprofile(None)
    assert calls[0] < 80, f"{calls[0]} C calls from Python for one forward + backward"


def test_small_calls_run_on_one_thread(monkeypatch):
    """Under MIN_THREADED_MACS a native attention or GEMM call keeps one thread (a cached
    generation step: one query row per head); above it the team is the budget, capped by the
    tasks (load awareness off: the budget, not a loaded machine's cap)."""
    from burn_ndarray import _load
    from burn_ndarray._native_ops import MIN_THREADED_MACS, team

    monkeypatch.setattr(_load, "_ON", False)
    assert team(4, 32, 4 * 8 * 1 * 264 * 128) == 1  # batch 4, 8 heads, 1 query, 264 keys
    assert team(4, 32, MIN_THREADED_MACS - 1) == 1
    assert team(4, 32, MIN_THREADED_MACS) == 4
    assert team(4, 2, 1 << 30) == 2
    assert team(4, 0, 1 << 30) == 1
