"""One-row products on NdArray's tiled GEMM (`_native/gemm.c`'s ROW_GEMV): a classifier's
`linear` on a batch of one, and `matmul` of [.., 1, k] rows, against float64 references over
layouts (a transposed-view row, batches of rows, k not a multiple of 4, with and without bias),
bitwise equal for 1/2 threads. The finding (a [1, 1024] @ [1024, 1000] linear took ~4x numpy's
GEMV: OpenBLAS's GEMM packed the whole weight for one row) is timed by
`benches/probes/one_row_linear.py`, not here: a timed test fails on a loaded machine."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray, _native

needs_native = pytest.mark.skipif(_native.lib() is None, reason="no native kernels here")


def _rel(got, want):
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))


@needs_native
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k, n", [(576, 1024), (1027, 301), (16387, 3)])
def test_one_row_linear_and_matmul_against_float64(dtype, k, n):
    rng = np.random.default_rng(4)
    nd = NdArray(float_dtype=np.dtype(dtype).name)
    x = rng.standard_normal((1, k)).astype(dtype)
    w = rng.standard_normal((k, n)).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    tol = 2e-6 if dtype == np.float32 else 1e-13
    assert _rel(nd.linear(x, w, b), x64 @ w64 + b) < tol
    assert _rel(nd.linear(x, w, None), x64 @ w64) < tol
    assert _rel(nd.linear(x[0], w, b), x64[0] @ w64 + b) < tol  # a 1-D input
    assert _rel(nd.float_matmul(x, w), x64 @ w64) < tol
    # the row as a transposed view (A read with a stride), and the weight transposed (the GEMM)
    col = np.ascontiguousarray(x.T)
    assert _rel(nd.float_matmul(col.T, w), x64 @ w64) < tol
    wt = np.ascontiguousarray(w.T).T
    assert _rel(nd.float_matmul(x, wt), x64 @ w64) < tol


@needs_native
def test_batched_rows_and_threads_bitwise():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 1, 700)).astype(np.float32)
    y = rng.standard_normal((3, 700, 130)).astype(np.float32)
    want = np.matmul(x.astype(np.float64), y.astype(np.float64))
    outs = [NdArray(num_threads=t).float_matmul(x, y) for t in (1, 2)]
    assert outs[0].shape == (3, 1, 130) and _rel(outs[0], want) < 2e-6
    assert outs[0].tobytes() == outs[1].tobytes()
