"""The hot path (`_fast.py`) without a GPU: its routing on the cupy stand-in (`fake_cupy.py`,
where the real kernel text runs on the CPU over the launcher's grid): which cases launch which
kernel with which broadcast geometry, what falls back, results against numpy float64, and its
CUDA sources compiled by nvcc where nvcc is installed."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from burn_cuda import _fast, _fast_source

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_cupy import FakeCupy, asfake


def _fallbacks():
    """A table like the backend's: op name -> (self, ...) function on numpy, marked as used."""
    used = []

    def mark(name, fn):
        def op(self, *args):
            used.append(name)
            return asfake(fn(*args))

        return op

    table = {}
    for p in ("float_", "int_"):
        for op, fn in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply)):
            table[p + op] = mark(p + op, fn)
            table[p + op + "_scalar"] = mark(p + op + "_scalar", lambda x, s, fn=fn: fn(x, s))
        table[p + "neg"] = mark(p + "neg", np.negative)
        table[p + "abs"] = mark(p + "abs", np.abs)
    table["float_div"] = mark("float_div", np.divide)
    table["float_div_scalar"] = mark("float_div_scalar", np.divide)
    for op in ("exp", "log", "sqrt", "tanh", "recip"):
        table["float_" + op] = mark("float_" + op, getattr(np, op, np.reciprocal))
    table["float_sum"] = mark("float_sum", lambda x: np.sum(x).reshape(1))
    for op, fn in (("sum", np.sum), ("mean", np.mean), ("max", np.max)):
        table[f"float_{op}_dim"] = mark(
            f"float_{op}_dim", lambda x, d, fn=fn: fn(x, axis=d, keepdims=True)
        )
    return table, used


@pytest.fixture
def fast():
    cp = FakeCupy()
    table, used = _fallbacks()
    return cp, _fast.ops(cp, table), used


def _arr(shape, dtype, seed=0, low=0.5, high=2.0):
    rng = np.random.default_rng(seed)
    return asfake(rng.uniform(low, high, size=shape).astype(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize(
    "sa,sb",
    [
        ((16,), (16,)),
        ((3, 5), (3, 5)),
        ((0, 4), (0, 4)),
        ((4, 7), (1, 7)),  # bias add
        ((4, 7), (4, 1)),  # x - max_dim(x)
        ((1, 7), (4, 7)),  # broadcast on the left operand
        ((4, 1), (1, 7)),  # both broadcast
        ((2, 3, 4, 5), (1, 3, 4, 1)),  # kept dims in one run: per-channel form
        ((2, 3, 4, 5), (1, 3, 1, 1)),  # conv bias
        ((2, 3, 4, 5), (2, 1, 4, 1)),  # broadcast and kept dims interleaved: falls back
        ((2, 3, 4), (2, 1, 4)),
    ],
)
def test_binary_routes_and_values(fast, dtype, op, sa, sb):
    cp, ops, used = fast
    a, b = _arr(sa, dtype, 1), _arr(sb, dtype, 2)
    got = ops[f"float_{op}"](None, a, b)
    want = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op](
        a.astype(np.float64), b.astype(np.float64)
    )
    assert got.shape == want.shape and got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    two_runs = sb == (2, 1, 4, 1)
    assert (used == [f"float_{op}"]) is two_runs
    if not two_runs and 0 not in sa:
        kind = cp.launches[-1][0]
        assert kind == ("binary" if sa == sb else "bc")


def test_broadcast_spans():
    assert _fast._bcast((4, 7), (4, 7)) == (0, 0)
    assert _fast._bcast((1, 7), (4, 7)) == (28, 7)  # idx = t % 7
    assert _fast._bcast((4, 1), (4, 7)) == (7, 1)  # idx = t / 7
    assert _fast._bcast((2, 1, 1, 5), (2, 3, 4, 5)) == (60, 5)
    assert _fast._bcast((1, 3, 4, 1), (2, 3, 4, 5)) == (-12, 5)  # idx = (t / 5) % 12
    assert _fast._bcast((1, 3, 1, 1), (2, 3, 4, 5)) == (-3, 20)
    assert _fast._bcast((1, 1, 7), (4, 1, 7)) == (28, 7)  # a size-1 dim on both sides
    assert _fast._bcast((2, 1, 4, 1), (2, 3, 4, 5)) is None  # interleaved
    assert _fast._bcast((3, 4), (2, 3, 4)) is None  # rank differs


def test_vector_grid_covers_every_element(fast):
    cp, ops, _ = fast
    for n in (1, 3, 4, 5, 1023, 1024, 1025, 4097):
        a, b = _arr(n, np.float32, 1), _arr(n, np.float32, 2)
        ops["float_add"](None, a, b)
        (grid,), (block,) = cp.launches[-1][2], cp.launches[-1][3]
        assert grid * block * 4 >= n > (grid - 1) * block * 4  # 4 float32 per thread
    a, b = _arr(1025, np.float64, 1), _arr(1025, np.float64, 2)
    ops["float_add"](None, a, b)
    assert cp.launches[-1][2] == (3,)  # 2 float64 per thread: 1025 / 512 -> 3 blocks


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_int_ops(fast, dtype):
    _, ops, used = fast
    a = asfake(np.array([[-3, 4, 7], [2**30, -5, 0]], dtype))
    b = asfake(np.array([[2, -2, 3], [1, 1, 1]], dtype))
    np.testing.assert_array_equal(ops["int_add"](None, a, b), a + b)
    np.testing.assert_array_equal(ops["int_mul"](None, a, b), a * b)
    np.testing.assert_array_equal(ops["int_abs"](None, a), np.abs(a))
    np.testing.assert_array_equal(ops["int_add_scalar"](None, a, 5), a + 5)
    assert "int_div" not in ops  # Burn's truncating int division stays on the table's op
    assert used == []
    # a float scalar on an int tensor, a bool, a huge int: the table's op decides
    ops["int_add_scalar"](None, a, True)
    with pytest.raises(OverflowError):  # numpy's own error: the kernel never saw it
        ops["int_mul_scalar"](None, a, 2**70)
    assert used == ["int_add_scalar", "int_mul_scalar"]


def test_scalar_unary_and_fallbacks(fast):
    _, ops, used = fast
    x = _arr((5, 6), np.float32)
    np.testing.assert_allclose(ops["float_mul_scalar"](None, x, 1.5), x * np.float32(1.5))
    np.testing.assert_allclose(ops["float_add_scalar"](None, x, 2), x + 2)  # int -> float
    np.testing.assert_allclose(ops["float_div_scalar"](None, x, 3.0), x / np.float32(3))
    np.testing.assert_allclose(ops["float_exp"](None, x), np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(ops["float_square"](None, x), x * x)
    assert used == []
    ops["float_exp"](None, x.T)  # not contiguous
    ops["float_exp"](None, x.astype(np.float16))  # no half kernel
    ops["float_add"](None, x, x.astype(np.float64))  # mixed dtypes
    ops["float_mul_scalar"](None, x, np.float32(2))  # a numpy scalar
    assert used == ["float_exp", "float_exp", "float_add", "float_mul_scalar"]


def test_reductions(fast):
    cp, ops, used = fast
    x = _arr((6, 33), np.float32, 3, -2, 2)
    np.testing.assert_allclose(ops["float_sum_dim"](None, x, 1), x.sum(1, keepdims=True), 1e-5)
    np.testing.assert_allclose(ops["float_mean_dim"](None, x, 1), x.mean(1, keepdims=True), 1e-5)
    np.testing.assert_array_equal(ops["float_max_dim"](None, x, 1), x.max(1, keepdims=True))
    assert cp.launches[-1][2] == (1,) and cp.launches[-1][4] == (6, 33)  # 8 rows per block
    np.testing.assert_allclose(ops["float_sum"](None, x), [x.astype(np.float64).sum()], 1e-6)
    assert used == []
    y = _arr((3, 5, 4, 2), np.float64, 4, -2, 2)
    for dim in range(4):
        for op, fn in (("sum", np.sum), ("mean", np.mean), ("max", np.max)):
            got = ops[f"float_{op}_dim"](None, y, dim)
            np.testing.assert_allclose(got, fn(y, axis=dim, keepdims=True), rtol=1e-12)
        assert cp.launches[-1][0] == ("row" if dim == 3 else "mid")
    assert used == []
    ops["float_sum_dim"](None, x.T, 0)  # not contiguous
    ops["float_sum"](None, _arr(_fast.SUM_ALL_MAX + 1, np.float32))  # big: cupy's reduction
    assert used == ["float_sum_dim", "float_sum"]


@pytest.mark.parametrize(
    "shape,dim",
    [((4000, 2), 0), ((3000, 17), 0), ((2, 1100, 33), 1)],
)
def test_few_long_columns_take_the_column_kernels(fast, shape, dim):
    """Few outputs along a long dim other than the last (a bias gradient's sum over the batch):
    burn_gpu's column kernels (tiles over the columns, chunks of the dim, a second pass over the
    chunk partials), not cupy's reduction (which took 52 us per call for torch's 15 on the H200)
    nor a thread walking each whole column."""
    cp, ops, used = fast
    x = _arr(shape, np.float32, 7, -2, 2)
    x64 = np.asarray(x, np.float64)
    n = shape[dim]
    for op, ref in (("sum", np.sum), ("mean", np.mean), ("max", np.max)):
        start = len(cp.launches)
        got = ops[f"float_{op}_dim"](None, x, dim)
        want = ref(x64, axis=dim, keepdims=True)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6 * np.sqrt(n), err_msg=op)
        kinds = [k[0] for k in cp.launches[start:]]
        names = [k.name for k in cp.launches[start:]]
        assert kinds and set(kinds) == {"col"}, (op, kinds)
        assert names[0] == ("sum" if op == "mean" else op) + "_cols"
    assert used == []
    again = ops["float_sum_dim"](None, x, dim)
    assert np.asarray(again).tobytes() == np.asarray(ops["float_sum_dim"](None, x, dim)).tobytes()


def test_relu_and_its_backward():
    cp = FakeCupy()
    table, used = _fallbacks()
    table["relu"] = lambda self, x: np.maximum(x, x.dtype.type(0))
    ops = _fast.ops(cp, table)
    assert used == []
    x = asfake(np.array([-1.0, -0.0, 0.0, 2.0, np.nan], np.float32))
    r = ops["relu"](None, x)
    np.testing.assert_array_equal(r, [0.0, 0.0, 0.0, 2.0, np.nan])
    assert not np.signbit(r[1])  # as cupy.maximum(x, 0)
    g = asfake(np.full(5, 3.0, np.float32))
    np.testing.assert_array_equal(ops["relu_backward"](None, r, g), [0, 0, 0, 3, 3])
    assert [k[1] for k in cp.launches] == ["relu", "relu_backward"] and used == []


def test_a_kernel_that_does_not_compile_falls_back():
    cp = FakeCupy(fail_compile={"binary", "row"})
    table, used = _fallbacks()
    ops = _fast.ops(cp, table)
    x = _arr((4, 3), np.float32)
    np.testing.assert_allclose(ops["float_add"](None, x, x), x + x)
    np.testing.assert_allclose(ops["float_add"](None, x, x), x + x)
    np.testing.assert_allclose(ops["float_sum_dim"](None, x, 1), x.sum(1, keepdims=True), 1e-6)
    np.testing.assert_allclose(ops["float_exp"](None, x), np.exp(x), 1e-6)  # compiles
    assert used == ["float_add", "float_add", "float_sum_dim"]
    assert ("binary", "add", "float32") in _fast.FAILED
    assert "fake NVRTC error" in _fast.FAILED[("binary", "add", "float32")]


def _nvcc_sources():
    out = []
    for dt in ("float32", "int64"):
        out.append(_fast_source.source("binary", "add", dt))
        out.append(_fast_source.source("bc", "sub", dt))
        out.append(_fast_source.source("unary", "abs", dt))
        out.append(_fast_source.source("scalar", "mul_scalar", dt))
    for dt in ("float32", "float64"):
        out.append(_fast_source.source("unary", "exp", dt))
        out.append(_fast_source.source("unary", "relu", dt))
        out.append(_fast_source.source("binary", "relu_backward", dt))
        out.append(_fast_source.source("mid", "max", dt))
        out.append(_fast_source.source("mid", "mean", dt))
        out.append(_fast_source.source("row", "max", dt))
        out.append(_fast_source.source("row", "mean", dt))
        out.append(_fast_source.source("sum_all", "", dt))
    return out


def test_hot_path_sources_compile_with_nvcc(nvcc_ptx):
    for i, (src, name) in enumerate(_nvcc_sources()):
        proc, ptx = nvcc_ptx(f"k{i}", src)
        assert proc.returncode == 0, (name, proc.stderr)
        assert f".entry {name}(" in ptx.read_text()


def test_random_broadcasts_match_numpy():
    # every pair of Burn-broadcastable shapes up to rank 4: the kernel's index maps (or the
    # fallback) give numpy's broadcast result
    cp = FakeCupy()
    table, _ = _fallbacks()
    ops = _fast.ops(cp, table)
    rng = np.random.default_rng(5)
    fast = 0
    for _ in range(300):
        rank = int(rng.integers(1, 5))
        out = [int(rng.integers(1, 5)) for _ in range(rank)]
        sa = [d if rng.random() < 0.6 else 1 for d in out]
        sb = [d if rng.random() < 0.6 else 1 for d in out]
        a, b = _arr(tuple(sa), np.float64, 1), _arr(tuple(sb), np.float64, 2)
        before = len(cp.launches)
        got = ops["float_sub"](None, a, b)
        np.testing.assert_array_equal(got, np.subtract(a, b))
        fast += len(cp.launches) > before
    assert fast > 200  # most patterns take a kernel
