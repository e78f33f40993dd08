"""NdArray's blocked attention kernel (`_attention`): equal to the default decomposition across
its block boundaries, the same bits for every thread count, and a long sequence's forward +
backward never holds the [seq, seq] scores (peak RSS of a fresh process)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_ndarray import _attention as kernel
from burn_tensor import Backend


def _inputs(b, h, sq, sk, d, dt=np.float64, seed=0):
    g = np.random.default_rng(seed)
    q, k, v = (g.normal(size=s).astype(dt) for s in ((b, h, sq, d), (b, h, sk, d), (b, h, sk, d)))
    return q, k, v


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", [(1, 1, 300, 2100), (2, 2, 260, 130), (1, 1, 129, 129)])
def test_kernel_equals_default_across_blocks(shape, causal):
    # seq_k 2100 walks three key blocks (online softmax); 260 queries three query blocks; a
    # padding mask hides a whole key block for some rows.
    b, h, sq, sk = shape
    be = NdArray(float_dtype="float64", num_threads=2)
    q, k, v = _inputs(b, h, sq, sk, 8)
    mask = np.zeros((b, 1, 1, sk), bool)
    mask[..., : min(sk, 1024)] = True
    mask[..., 0] = False
    g = np.random.default_rng(1).normal(size=(b, h, sq, 8))
    for m in (None, mask):
        np.testing.assert_allclose(
            be.attention(q, k, v, m, causal, 0.3),
            Backend.attention(be, q, k, v, m, causal, 0.3),
            rtol=1e-12,
            atol=1e-13,
        )
        got = be.attention_backward(q, k, v, m, g, causal, 0.3)
        want = Backend.attention_backward(be, q, k, v, m, g, causal, 0.3)
        for a, w in zip(got, want):
            np.testing.assert_allclose(a, w, rtol=1e-10, atol=1e-12)


def test_kernel_bits_do_not_depend_on_threads():
    q, k, v = _inputs(2, 4, 200, 300, 16, np.float32)
    g = np.random.default_rng(2).normal(size=(2, 4, 200, 16)).astype(np.float32)
    one = kernel.forward(q, k, v, None, True, 0.25, 1)
    grads_one = kernel.backward(q, k, v, None, g, True, 0.25, 1)
    for t in (2, 3):
        assert np.array_equal(kernel.forward(q, k, v, None, True, 0.25, t), one)
        for a, w in zip(kernel.backward(q, k, v, None, g, True, 0.25, t), grads_one):
            assert np.array_equal(a, w)


def test_kernel_float32_result_dtype_and_masked_rows():
    q, k, v = _inputs(1, 2, 4, 6, 3, np.float32)
    mask = np.zeros((1, 2, 4, 6), bool)
    mask[0, 1, 2] = True
    out = NdArray().attention(q, k, v, mask, False, 0.5)
    assert out.dtype == np.float32 and np.all(out[0, 1, 2] == 0) and np.isfinite(out).all()


_CHILD = """
import resource, numpy as np
from burn_ndarray import NdArray
b = NdArray(num_threads=2)
s, d = {seq}, 64
g = np.random.default_rng(0)
q, k, v, go = (g.standard_normal((1, 1, s, d), dtype=np.float32) for _ in range(4))
b.attention(q[:, :, :8], k[:, :, :8], v[:, :, :8], None, True, 0.125)  # warm the pool
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
out = b.attention(q, k, v, None, {causal}, 0.125)
dq, dk, dv = b.attention_backward(q, k, v, None, go, {causal}, 0.125)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) // 1024)
"""


def test_long_sequence_never_holds_the_score_matrix():
    # [4096, 4096] float32 scores are 64 MiB: the composition's peak grows 265 MiB here, the
    # kernel's ~8 MiB (blocks of <= 128 x 1024 per thread). Causal: half the work, the same
    # blocks (the non-causal path differs only in where a query block stops).
    code = textwrap.dedent(_CHILD.format(seq=4096, causal=True))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    grew_mib = int(res.stdout.strip())
    assert grew_mib < 24, f"peak RSS grew {grew_mib} MiB"
