"""Conformance: reductions, scans, arg ops, sorting, statistics and matmul."""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import Bool, DType, Float, Int, Tensor

from .._ctx import LAYOUTS, sample


def _r(burn, t, expected, kind):
    burn.assert_result(t, expected, kind, burn.loose)


def _distinct(kind, shape, seed=0):
    """Values without ties (so arg ops and sort indices are unambiguous)."""
    n = int(np.prod(shape))
    perm = np.random.default_rng(seed).permutation(n).reshape(shape)
    return (perm - n // 2) * (0.75 if kind is Float else 1)


def _trunc_mean(x, axis=None, keepdims=False):
    n = x.size if axis is None else x.shape[axis]
    return np.trunc(np.sum(x, axis=axis, keepdims=keepdims) / max(n, 1)).astype(np.int64)


FULL = {
    "sum": (Tensor.sum, np.sum),
    "prod": (Tensor.prod, np.prod),
    "mean": (Tensor.mean, np.mean),
    "max": (Tensor.max, np.max),
    "min": (Tensor.min, np.min),
    "max_abs": (Tensor.max_abs, lambda x: np.max(np.abs(x))),
}
DIM = {
    "sum_dim": (Tensor.sum_dim, np.sum),
    "prod_dim": (Tensor.prod_dim, np.prod),
    "mean_dim": (Tensor.mean_dim, np.mean),
    "max_dim": (Tensor.max_dim, np.max),
    "min_dim": (Tensor.min_dim, np.min),
    "max_abs_dim": (
        Tensor.max_abs_dim,
        lambda x, axis, keepdims: np.max(np.abs(x), axis=axis, keepdims=keepdims),
    ),
}
SCANS = {
    "cumsum": (Tensor.cumsum, np.cumsum),
    "cumprod": (Tensor.cumprod, np.cumprod),
    "cummin": (Tensor.cummin, np.minimum.accumulate),
    "cummax": (Tensor.cummax, np.maximum.accumulate),
}


def _input(burn, kind, shape, layout, seed=0):
    if kind is Float:
        x = sample(shape, "small", seed)
    else:
        x = np.random.default_rng(seed).integers(-4, 5, shape)
    return burn.view_input(x, kind, layout)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kind", [Float, Int], ids=["float", "int"])
@pytest.mark.parametrize("name", list(FULL))
def test_full_reductions(burn, name, kind, layout):
    op, ref = FULL[name]
    t, x = _input(burn, kind, (3, 4, 2), layout)
    if kind is Int and name == "mean":
        expected = _trunc_mean(x).reshape(1)
    else:
        expected = np.asarray(ref(x)).reshape(1)
    _r(burn, op(t), expected, kind)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kind", [Float, Int], ids=["float", "int"])
@pytest.mark.parametrize("name", list(DIM))
def test_dim_reductions_keep_dim(burn, name, kind, layout):
    op, ref = DIM[name]
    t, x = _input(burn, kind, (3, 4, 2), layout, seed=1)
    for dim in (0, 1, 2, -1, -3):
        if kind is Int and name == "mean_dim":
            expected = _trunc_mean(x, axis=dim, keepdims=True)
        else:
            expected = ref(x, axis=dim, keepdims=True)
        _r(burn, op(t, dim), expected, kind)


# Few outputs, long reduced dims (a bias gradient's sum over the batch, at small scale): the
# GPU backends take their column kernels here (tiles over the columns, the dim split in chunks
# with a ragged last one, a second pass over the chunk partials), one launch for the short
# column. Float only: the int sums run the same kernel text (burn-gpu's tests run it on int32),
# and each kernel is a cold PoCL compile in CI.
COLUMN_CASES = {
    "3000x17_dim0": ((3000, 17), 0),
    "2x1100x33_dim1": ((2, 1100, 33), 1),
    "40x64x24_dim1": ((40, 64, 24), 1),
    "700x2_dim0": ((700, 2), 0),
}


@pytest.mark.parametrize("case", list(COLUMN_CASES))
def test_column_sum_mean_max_min_long_dims(burn, case):
    shape, dim = COLUMN_CASES[case]
    t, x = _input(burn, Float, shape, "contiguous", seed=9)
    for name in ("sum_dim", "mean_dim", "max_dim", "min_dim"):
        op, ref = DIM[name]
        _r(burn, op(t, dim), ref(x, axis=dim, keepdims=True), Float)
    if len(shape) == 3 and burn.fdt not in (DType.F16, DType.BF16):
        # (half types: a backend may round between the dims, ~sqrt(n) half ulps over 1100 rows)
        _r(burn, t.sum_dims([0, 1]), x.sum((0, 1), keepdims=True), Float)


def test_column_sum_same_bits_every_run(burn):
    """A long column sum in a fixed order: two runs give the same bits (no float atomics)."""
    t, _ = _input(burn, Float, (2, 1100, 33), "contiguous", seed=10)
    a, b = t.sum_dim(1).to_data().array, t.sum_dim(1).to_data().array
    assert a.tobytes() == b.tobytes()
    a, b = t.mean_dim(0).to_data().array, t.mean_dim(0).to_data().array
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("kind", [Float, Int], ids=["float", "int"])
def test_empty_reductions(burn, kind):
    t, _ = _input(burn, kind, (0, 3), "contiguous")
    _r(burn, t.sum_dim(0), np.zeros((1, 3)), kind)
    _r(burn, t.prod_dim(0), np.ones((1, 3)), kind)
    _r(burn, t.sum(), np.zeros(1), kind)
    _r(burn, t.sum_dim(1), np.zeros((0, 1)), kind)
    _r(burn, t.cumsum(0), np.zeros((0, 3)), kind)
    burn.assert_equal(t.any(), np.array([False]))
    burn.assert_equal(t.all(), np.array([True]))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kind", [Float, Int], ids=["float", "int"])
@pytest.mark.parametrize("name", list(SCANS))
def test_scans(burn, name, kind, layout):
    op, ref = SCANS[name]
    t, x = _input(burn, kind, (3, 4, 2), layout, seed=2)
    for dim in (0, 1, -1):
        _r(burn, op(t, dim), ref(x, axis=dim), kind)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kind", [Float, Int], ids=["float", "int"])
def test_arg_ops(burn, kind, layout):
    x0 = _distinct(kind, (3, 4, 5), seed=3)
    t, x = burn.view_input(x0, kind, layout)
    for dim in (0, 1, 2, -1):
        burn.assert_equal(t.argmax(dim), np.argmax(x, dim, keepdims=True))
        burn.assert_equal(t.argmin(dim), np.argmin(x, dim, keepdims=True))
        v, i = t.max_dim_with_indices(dim)
        _r(burn, v, np.max(x, dim, keepdims=True), kind)
        burn.assert_equal(i, np.argmax(x, dim, keepdims=True))
        v, i = t.min_dim_with_indices(dim)
        _r(burn, v, np.min(x, dim, keepdims=True), kind)
        burn.assert_equal(i, np.argmin(x, dim, keepdims=True))


@pytest.mark.parametrize("kind", [Float, Int], ids=["float", "int"])
def test_arg_ops_ties_first_occurrence(burn, kind):
    t = burn.tensor([[1, 3, 3, 0], [2, 2, 0, 0]], kind)
    burn.assert_equal(t.argmax(1), np.array([[1], [0]]))
    burn.assert_equal(t.argmin(1), np.array([[3], [2]]))


@pytest.mark.parametrize("kind", [Float, Int], ids=["float", "int"])
def test_multi_dim_reductions(burn, kind):
    t, x = _input(burn, kind, (2, 3, 4), "permuted", seed=4)
    _r(burn, t.sum_dims([0, 2]), x.sum((0, 2), keepdims=True), kind)
    _r(burn, t.sum_dims_squeeze([0, 2]), x.sum((0, 2)), kind)
    _r(burn, t.max_dims([1, -1]), x.max((1, 2), keepdims=True), kind)
    _r(burn, t.min_dims([0]), x.min(0, keepdims=True), kind)
    _r(burn, t.prod_dims([1]), x.prod(1, keepdims=True), kind)
    if kind is Float:
        burn.assert_close(t.mean_dims([0, 1]), x.mean((0, 1), keepdims=True), burn.loose)


@pytest.mark.parametrize("layout", ["contiguous", "permuted", "expanded"])
@pytest.mark.parametrize("kind", [Float, Int, Bool], ids=["float", "int", "bool"])
def test_any_all(burn, kind, layout):
    g = np.random.default_rng(6)
    x0 = (g.random((3, 4)) < 0.3) * g.integers(1, 5, (3, 4))
    x0[1] = 1
    t, x = burn.view_input(x0 if kind is not Bool else x0 != 0, kind, layout)
    nz = x != 0
    burn.assert_equal(t.any(), np.array([nz.any()]))
    burn.assert_equal(t.all(), np.array([nz.all()]))
    for dim in (0, 1, -1):
        burn.assert_equal(t.any_dim(dim), nz.any(dim, keepdims=True))
        burn.assert_equal(t.all_dim(dim), nz.all(dim, keepdims=True))


@pytest.mark.parametrize("layout", ["contiguous", "permuted", "strided"])
def test_var_mean(burn, layout):
    t, x = burn.view_input(sample((3, 5), "any", 7), Float, layout)
    for dim in (0, 1, -1):
        burn.assert_close(t.var(dim), x.var(dim, ddof=1, keepdims=True), burn.loose)
        burn.assert_close(t.var_bias(dim), x.var(dim, keepdims=True), burn.loose)
        v, m = t.var_mean(dim)
        burn.assert_close(v, x.var(dim, ddof=1, keepdims=True), burn.loose)
        burn.assert_close(m, x.mean(dim, keepdims=True), burn.loose)
        v, m = t.var_mean_bias(dim)
        burn.assert_close(v, x.var(dim, keepdims=True), burn.loose)
        burn.assert_close(m, x.mean(dim, keepdims=True), burn.loose)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kind", [Float, Int], ids=["float", "int"])
def test_sort_family(burn, kind, layout):
    t, x = burn.view_input(_distinct(kind, (4, 6), seed=8), kind, layout)
    for dim in (0, 1, -1):
        asc = np.argsort(x, dim, kind="stable")
        desc = np.argsort(-x, dim, kind="stable")
        _r(burn, t.sort(dim), np.take_along_axis(x, asc, dim), kind)
        _r(burn, t.sort_descending(dim), np.take_along_axis(x, desc, dim), kind)
        v, i = t.sort_with_indices(dim)
        _r(burn, v, np.take_along_axis(x, asc, dim), kind)
        burn.assert_equal(i, asc)
        v, i = t.sort_descending_with_indices(dim)
        _r(burn, v, np.take_along_axis(x, desc, dim), kind)
        burn.assert_equal(i, desc)
        burn.assert_equal(t.argsort(dim), asc)
        burn.assert_equal(t.argsort_descending(dim), desc)
        k = 3
        topi = np.take(desc, np.arange(k), axis=dim)
        _r(burn, t.topk(k, dim), np.take_along_axis(x, topi, dim), kind)
        v, i = t.topk_with_indices(k, dim)
        _r(burn, v, np.take_along_axis(x, topi, dim), kind)
        burn.assert_equal(i, topi)
        burn.assert_equal(t.argtopk(k, dim), topi)


@pytest.mark.parametrize("kind", [Float, Int], ids=["float", "int"])
def test_sort_is_stable_with_ties(burn, kind):
    t = burn.tensor([3, 1, 2, 1, 3, 2], kind)
    burn.assert_equal(t.argsort(0), np.array([1, 3, 2, 5, 0, 4]))
    burn.assert_equal(t.argsort_descending(0), np.array([0, 4, 2, 5, 1, 3]))
    _r(burn, t.sort_descending(0), np.array([3, 3, 2, 2, 1, 1]), kind)


@pytest.mark.parametrize("kind", [Float, Int], ids=["float", "int"])
def test_median(burn, kind):
    t, x = burn.view_input(_distinct(kind, (3, 5), seed=9), kind, "permuted")
    for dim, n in ((1, 5), (0, 3)):
        order = np.argsort(x, dim, kind="stable")
        k = (n - 1) // 2
        mi = np.take(order, [k], axis=dim)
        v, i = t.median_with_indices(dim)
        _r(burn, v, np.take_along_axis(x, mi, dim), kind)
        burn.assert_equal(i, mi)
        _r(burn, t.median(dim), np.take_along_axis(x, mi, dim), kind)


MATMUL_SHAPES = [
    ((2, 3), (3, 4)),
    ((1, 5), (5, 1)),
    ((3, 0), (0, 2)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (1, 5, 4, 2)),
    ((1, 3, 4), (2, 4, 6)),
]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kind", [Float, Int], ids=["float", "int"])
def test_matmul(burn, kind, layout):
    for i, (sa, sb) in enumerate(MATMUL_SHAPES):
        if kind is Float:
            a, b = sample(sa, "any", i), sample(sb, "any", 50 + i)
        else:
            a = np.random.default_rng(i).integers(-5, 6, sa)
            b = np.random.default_rng(50 + i).integers(-5, 6, sb)
        ta, ar = burn.view_input(a, kind, layout)
        tb, br = burn.view_input(b, kind, "permuted" if layout == "contiguous" else "contiguous")
        _r(burn, ta.matmul(tb), ar @ br, kind)
        _r(burn, ta @ tb, ar @ br, kind)


def test_dot(burn):
    a, b = np.array([1.0, 2.0, 3.0]), np.array([4.0, -5.0, 6.0])
    burn.assert_close(burn.float(a).dot(burn.float(b)), [a @ b])
