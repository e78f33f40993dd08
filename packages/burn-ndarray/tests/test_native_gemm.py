"""NdArray's tiled GEMM on the OpenMP team (`_native/gemm.c`, `_native_gemm.py`): matmul and the
linear layer's three GEMMs against float64 references over layouts (transposed views, batches,
one side broadcast, k = 0, empty), bitwise equal for 1/2/4 threads, and OpenBLAS's own thread
pool left asleep (the finding: its spinning threads took the cores of the kernels after it)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from burn_ndarray import NdArray, _native
from burn_ndarray._native_gemm import MIN_TILE, tiles

needs_native = pytest.mark.skipif(_native.lib() is None, reason="no native kernels here")

CASES = [
    ((300, 200), (200, 170)),
    ((3, 130, 70), (3, 70, 90)),
    ((1, 4, 130, 70), (1, 4, 70, 90)),
    ((4, 130, 70), (70, 90)),  # a 2-D right side broadcast over the batch
    ((200, 256), (1, 256, 300)),
    ((2, 3, 129, 65), (2, 3, 65, 257)),
]


def _t(a):
    """The same values as `a` through a transposed view (Fortran-ordered last two dims)."""
    return np.ascontiguousarray(np.swapaxes(a, -1, -2)).swapaxes(-1, -2)


def _rel(got, want):
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))


@needs_native
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("layout", ["c", "tx", "ty", "both"])
def test_matmul_against_float64(case, dtype, layout):
    rng = np.random.default_rng(1)
    x, y = (rng.standard_normal(s).astype(dtype) for s in case)
    xx = _t(x) if layout in ("tx", "both") else x
    yy = _t(y) if layout in ("ty", "both") else y
    got = NdArray(float_dtype=np.dtype(dtype).name).float_matmul(xx, yy)
    want = np.matmul(x.astype(np.float64), y.astype(np.float64))
    assert got.shape == want.shape and got.dtype == dtype
    assert _rel(got, want) < (2e-6 if dtype == np.float32 else 1e-13)


@needs_native
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linear_and_its_gradients_against_float64(dtype):
    rng = np.random.default_rng(2)
    nd = NdArray(float_dtype=np.dtype(dtype).name)
    x = rng.standard_normal((4, 130, 300)).astype(dtype)
    w = rng.standard_normal((300, 190)).astype(dtype)
    b = rng.standard_normal(190).astype(dtype)
    g = rng.standard_normal((4, 130, 190)).astype(dtype)
    x64, w64, g64 = x.astype(np.float64), w.astype(np.float64), g.astype(np.float64)
    tol = 2e-6 if dtype == np.float32 else 1e-13
    out = nd.linear(x, w, b)
    assert out.shape == (4, 130, 190) and _rel(out, x64 @ w64 + b) < tol
    assert _rel(nd.linear(x, w, None), x64 @ w64) < tol
    dx = nd.linear_x_backward(w, g)
    assert dx.shape == x.shape and _rel(dx, g64 @ w64.T) < tol
    dw = nd.linear_weight_backward(x, g)
    want = x64.reshape(-1, 300).T @ g64.reshape(-1, 190)
    assert dw.shape == w.shape and _rel(dw, want) < tol
    # a 1-D input (one row) and a transposed-view weight
    x1 = x[0, 0]
    assert nd.linear(x1, _t(w), b).shape == (190,)
    assert _rel(nd.linear(x1, _t(w), b), x64[0, 0] @ w64 + b) < tol


@needs_native
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", [1023, 1024, 6])
def test_one_row_products_against_float64(dtype, k):
    """m == 1 with B untransposed takes gemm.c's own row kernel (four rows of B a pass, a
    remainder of k % 4, the bias added last); a transposed B keeps the BLAS GEMM. A through a
    transposed view ([k, 1] stored) too; 1 and 2 threads alike."""
    rng = np.random.default_rng(4)
    name = np.dtype(dtype).name
    n = 1000 if k > 6 else 40_000  # past native_min either way
    x = rng.standard_normal((1, k)).astype(dtype)
    w = rng.standard_normal((k, n)).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    tol = 2e-6 if dtype == np.float32 else 1e-13
    got = []
    for t in (1, 2):
        nd = NdArray(float_dtype=name, num_threads=t)
        outs = (nd.float_matmul(x, w), nd.float_matmul(_t(x), w), nd.float_matmul(x, _t(w)),
                nd.linear(x, w, b), nd.linear(x[0], w, None), nd.linear(x, _t(w), b))  # fmt: skip
        wants = (x64 @ w64, x64 @ w64, x64 @ w64, x64 @ w64 + b, x64[0] @ w64, x64 @ w64 + b)
        for o, want in zip(outs, wants):
            assert o.shape == want.shape and o.dtype == dtype and _rel(o, want) < tol
        got.append(outs)
    for a, c in zip(*got):
        assert a.tobytes() == c.tobytes()


@needs_native
def test_zero_k_and_empty_outputs():
    nd = NdArray()
    x, y = np.ones((300, 0), np.float32), np.ones((0, 200), np.float32)
    # k = 0: too small for the kernel by elements, so force the path through a big batch
    big_x, big_y = np.ones((100, 300, 0), np.float32), np.ones((100, 0, 200), np.float32)
    assert (nd.float_matmul(x, y) == 0).all()
    out = nd.float_matmul(big_x, big_y)
    assert out.shape == (100, 300, 200) and (out == 0).all()
    b = np.arange(200, dtype=np.float32)
    lin = nd.linear(np.ones((300, 0), np.float32), np.ones((0, 200), np.float32), b)
    assert (lin == b).all()
    empty = nd.float_matmul(np.ones((0, 300, 70), np.float32), np.ones((0, 70, 90), np.float32))
    assert empty.shape == (0, 300, 90)


@needs_native
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bitwise_identical_for_1_2_4_threads(dtype):
    rng = np.random.default_rng(3)
    name = np.dtype(dtype).name
    x = rng.standard_normal((2, 600, 520)).astype(dtype)
    y = rng.standard_normal((2, 520, 300)).astype(dtype)
    w = rng.standard_normal((520, 300)).astype(dtype)
    b = rng.standard_normal(300).astype(dtype)
    g = rng.standard_normal((2, 600, 300)).astype(dtype)
    results = []
    for t in (1, 2, 4):
        nd = NdArray(float_dtype=name, num_threads=t)
        results.append((nd.float_matmul(x, y), nd.float_matmul(_t(x), y), nd.linear(x, w, b),
                        nd.linear_x_backward(w, g), nd.linear_weight_backward(x, g)))  # fmt: skip
    for other in results[1:]:
        for a, c in zip(results[0], other):
            assert a.tobytes() == c.tobytes()


def test_tiles_depend_on_shapes_only_and_cover_the_work():
    assert tiles(1, 4096, 512, 512) == (256, 512)
    assert tiles(1, 8, 8, 8) == (8, 8)  # one small GEMM: one tile
    for batch, m, n, k in [(1, 4096, 2048, 512), (32, 128, 128, 64), (1, 512, 512, 4096)]:
        tm, tn = tiles(batch, m, n, k)
        assert tm % 16 == 0 and tn % 16 == 0 and min(tm, tn) >= MIN_TILE
        assert batch * -(-m // tm) * -(-n // tn) <= 32


PROBE = textwrap.dedent(
    """
    import os, numpy as np
    main = {int(t) for t in os.listdir("/proc/self/task")}  # OpenBLAS's pool starts at load
    def ticks(tids):
        total = 0
        for t in tids:
            try:
                with open(f"/proc/self/task/{t}/stat") as f:
                    parts = f.read().rsplit(")", 1)[1].split()
                total += int(parts[11]) + int(parts[12])  # utime + stime
            except FileNotFoundError:
                pass
        return total
    from burn_ndarray import NdArray
    nd = NdArray(num_threads=2)
    blas = main - {os.getpid()}
    x = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
    nd.float_matmul(x, x)
    before = ticks(blas)
    for _ in range(10):
        nd.float_matmul(x, x)
    print(len(blas), ticks(blas) - before)
    """
)


@needs_native
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores for a BLAS pool")
def test_matmul_leaves_openblas_pool_asleep():
    """Ten [1024, 1024]^2 float32 matmuls (2^30 multiply-adds each: numpy's path gave them both
    BLAS threads) on a 2-thread NdArray: OpenBLAS's pool threads, which exist from numpy's
    import, get no CPU time (before: they ran half of each GEMM and then spun ~0.1 s)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="2")
    env.pop("BURN_NDARRAY_NATIVE_GEMM", None)
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         timeout=300, env=env, check=True).stdout.split()  # fmt: skip
    pool, ticks = int(out[0]), int(out[1])
    if pool == 0:
        pytest.skip("numpy's BLAS started no thread pool here")
    assert ticks <= 2, f"OpenBLAS's pool threads ran {ticks} ticks during the matmuls"
