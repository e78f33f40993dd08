"""Conformance: shape, layout, slicing, indexing and combining ops for every kind and layout."""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import Bool, Float, Int, Tensor, s

from .._ctx import LAYOUTS, sample

KINDS = [Float, Int, Bool]
KIND_IDS = ["float", "int", "bool"]


def data(kind, shape, seed=0):
    """Inputs of `kind` with distinct-ish values (float64 / int64 / bool numpy arrays)."""
    if kind is Float:
        return sample(shape, "any", seed)
    if kind is Int:
        return np.random.default_rng(seed).integers(-50, 50, shape)
    return np.random.default_rng(seed).random(shape) < 0.5


# name -> (Tensor op, numpy reference); inputs have shape (2, 3, 4)
SHAPE_OPS = {
    "reshape": (lambda t: t.reshape([4, 6]), lambda x: x.reshape(4, 6)),
    "reshape_infer": (lambda t: t.reshape([-1]), lambda x: x.reshape(-1)),
    "reshape_keep0": (lambda t: t.reshape([0, -1]), lambda x: x.reshape(2, 12)),
    "reshape_3d": (lambda t: t.reshape((6, -1, 2)), lambda x: x.reshape(6, 2, 2)),
    "view": (lambda t: t.view([3, 8]), lambda x: x.reshape(3, 8)),
    "flatten": (lambda t: t.flatten(1, 2), lambda x: x.reshape(2, 12)),
    "flatten_all": (lambda t: t.flatten(0, -1), lambda x: x.reshape(24)),
    "unsqueeze": (lambda t: t.unsqueeze(), lambda x: x[None]),
    "unsqueeze_rank": (lambda t: t.unsqueeze(5), lambda x: x[None, None]),
    "unsqueeze_dim": (lambda t: t.unsqueeze_dim(1), lambda x: x[:, None]),
    "unsqueeze_dim_neg": (lambda t: t.unsqueeze_dim(-1), lambda x: x[..., None]),
    "unsqueeze_dims": (lambda t: t.unsqueeze_dims([0, -1]), lambda x: x[None, ..., None]),
    "unsqueeze_dims_mid": (lambda t: t.unsqueeze_dims([1, 3]), lambda x: x[:, None, :, None]),
    "squeeze_roundtrip": (lambda t: t.unsqueeze_dim(2).squeeze_dim(2), lambda x: x),
    "squeeze_dim_neg": (lambda t: t.unsqueeze_dim(-1).squeeze_dim(-1), lambda x: x),
    "squeeze_all": (lambda t: t.reshape([1, 2, 1, 12]).squeeze(), lambda x: x.reshape(2, 12)),
    "squeeze_dims": (
        lambda t: t.reshape([1, 2, 1, 12]).squeeze_dims([0, 2]),
        lambda x: x.reshape(2, 12),
    ),
    "permute": (lambda t: t.permute([2, 0, 1]), lambda x: x.transpose(2, 0, 1)),
    "permute_neg": (lambda t: t.permute([-1, 0, 1]), lambda x: x.transpose(2, 0, 1)),
    "swap_dims": (lambda t: t.swap_dims(0, 2), lambda x: x.swapaxes(0, 2)),
    "transpose": (lambda t: t.transpose(), lambda x: x.swapaxes(-1, -2)),
    "T": (lambda t: t.T, lambda x: x.swapaxes(-1, -2)),
    "movedim": (lambda t: t.movedim(0, 2), lambda x: np.moveaxis(x, 0, 2)),
    "flip": (lambda t: t.flip([0, 2]), lambda x: np.flip(x, (0, 2))),
    "flip_neg": (lambda t: t.flip([-1]), lambda x: np.flip(x, -1)),
    "expand": (
        lambda t: t.narrow(0, 0, 1).expand([3, 3, 4]),
        lambda x: np.broadcast_to(x[:1], (3, 3, 4)),
    ),
    "expand_lead": (lambda t: t.expand([2, 2, 3, 4]), lambda x: np.broadcast_to(x, (2, 2, 3, 4))),
    "expand_keep": (
        lambda t: t.narrow(1, 0, 1).expand([-1, 5, -1]),
        lambda x: np.broadcast_to(x[:, :1], (2, 5, 4)),
    ),
    "repeat_dim": (lambda t: t.repeat_dim(1, 3), lambda x: np.tile(x, (1, 3, 1))),
    "repeat_dim_zero": (lambda t: t.repeat_dim(0, 0), lambda x: x[:0]),
    "repeat": (lambda t: t.repeat([2, 1, 3]), lambda x: np.tile(x, (2, 1, 3))),
    "repeat_two_ints": (lambda t: t.repeat(2, 2), lambda x: np.tile(x, (1, 1, 2))),
    "narrow": (lambda t: t.narrow(2, 1, 2), lambda x: x[:, :, 1:3]),
    "narrow_neg_start": (lambda t: t.narrow(1, -2, 2), lambda x: x[:, 1:3]),
    "roll_dim": (lambda t: t.roll_dim(1, 2), lambda x: np.roll(x, 1, 2)),
    "roll_dim_neg": (lambda t: t.roll_dim(-5, 1), lambda x: np.roll(x, -5, 1)),
    "roll": (lambda t: t.roll([1, -1], [0, 2]), lambda x: np.roll(x, (1, -1), (0, 2))),
    "getitem_int": (lambda t: t[1], lambda x: x[1:2]),
    "getitem_tuple": (lambda t: t[:, -1, 1:3], lambda x: x[:, 2:3, 1:3]),
    "getitem_ellipsis": (lambda t: t[..., -1], lambda x: x[..., 3:4]),
    "chain_views": (
        lambda t: t.permute([1, 0, 2]).flip([2]).reshape([3, 8]),
        lambda x: np.flip(x.transpose(1, 0, 2), 2).reshape(3, 8),
    ),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kind", KINDS, ids=KIND_IDS)
@pytest.mark.parametrize("name", list(SHAPE_OPS))
def test_shape_ops(burn, name, kind, layout):
    op, ref = SHAPE_OPS[name]
    t, x = burn.view_input(data(kind, (2, 3, 4)), kind, layout)
    burn.assert_result(op(t), ref(x), kind)


def _burn_slice_ref(x, items):
    """Independent reference of Burn's `s![]` semantics with explicit index lists."""
    idx = []
    for d, n in enumerate(x.shape):
        it = items[d] if d < len(items) else slice(None)
        if isinstance(it, int):
            i = it + n if it < 0 else it
            idx.append([i])
            continue
        step = it.step or 1
        start = 0 if it.start is None else (it.start + n if it.start < 0 else it.start)
        stop = n if it.stop is None else (it.stop + n if it.stop < 0 else it.stop)
        start, stop = min(max(start, 0), n), min(max(stop, 0), n)
        rng = list(range(start, stop))
        idx.append(rng[::step] if step > 0 else rng[::-1][::-step])
    return x[np.ix_(*idx)] if x.ndim else x


SLICES = {
    "range": s[1:3],
    "int_keeps_rank": s[1, 2],
    "negative_index": s[-1, -2, -3],
    "negative_range": s[-3:-1, :, -2:],
    "step": s[:, ::2, 1::2],
    "neg_step_full": s[::-1],
    "neg_step_range": s[:, 0:10:-1],
    "neg_step_2": s[:, :, 0:4:-2],
    "clamped_end": s[0:100, 1:7],
    "mixed": s[1, ::-2, 1:3],
    "empty_range": s[:, 1:1],
    "ellipsis_last": s[..., 3],
}


@pytest.mark.parametrize("layout", ["contiguous", "permuted", "strided"])
@pytest.mark.parametrize("kind", KINDS, ids=KIND_IDS)
@pytest.mark.parametrize("name", list(SLICES))
def test_slice(burn, name, kind, layout):
    items = SLICES[name]
    t, x = burn.view_input(data(kind, (3, 5, 4), seed=1), kind, layout)
    if name == "ellipsis_last":
        expected = x[..., 3:4]
    else:
        expected = _burn_slice_ref(x, items)
    burn.assert_result(t.slice(items), expected, kind)
    burn.assert_result(t.slice(*items), expected, kind)
    burn.assert_result(t[items], expected, kind)


def test_burn_slice_steps_literal(burn):
    t = burn.int(np.arange(10))
    burn.assert_equal(t.slice(s[0:5:-1]), np.array([4, 3, 2, 1, 0]))
    burn.assert_equal(t.slice(s[2:8:-2]), np.array([7, 5, 3]))
    burn.assert_equal(t.slice(s[::3]), np.array([0, 3, 6, 9]))
    burn.assert_equal(t.slice([range(1, 4)]), np.array([1, 2, 3]))


@pytest.mark.parametrize("layout", ["contiguous", "flipped", "expanded"])
@pytest.mark.parametrize("kind", KINDS, ids=KIND_IDS)
@pytest.mark.parametrize("name", ["range", "step", "neg_step_range", "negative_index", "mixed"])
def test_slice_assign(burn, name, kind, layout):
    items = SLICES[name]
    t, x = burn.view_input(data(kind, (3, 5, 4), seed=2), kind, layout)
    region = _burn_slice_ref(x, items)
    v = data(kind, region.shape, seed=3)
    vt = burn.tensor(v, kind)
    vr = burn.ref(v, kind)
    expected = x.copy()
    # write through the same explicit index lists as the reference slice
    idx = []
    for d, n in enumerate(x.shape):
        it = items[d] if d < len(items) else slice(None)
        if isinstance(it, int):
            idx.append([it + n if it < 0 else it])
        else:
            step = it.step or 1
            start = 0 if it.start is None else (it.start + n if it.start < 0 else it.start)
            stop = n if it.stop is None else (it.stop + n if it.stop < 0 else it.stop)
            rng = list(range(min(max(start, 0), n), min(max(stop, 0), n)))
            idx.append(rng[::step] if step > 0 else rng[::-1][::-step])
    expected[np.ix_(*idx)] = vr
    before = t.to_data().numpy()
    burn.assert_result(t.slice_assign(items, vt), expected, kind)
    # immutable: the input tensor is unchanged
    assert np.array_equal(t.to_data().numpy(), before, equal_nan=kind is Float)
    fill = 7 if kind is not Bool else True
    expected_fill = x.copy()
    expected_fill[np.ix_(*idx)] = fill
    burn.assert_result(t.slice_fill(items, fill), expected_fill, kind)


@pytest.mark.parametrize("kind", KINDS, ids=KIND_IDS)
def test_split_chunk_iter(burn, kind):
    t, x = burn.view_input(data(kind, (11, 3), seed=4), kind, "permuted")
    parts = t.chunk(6, 0)
    assert [p.dims() for p in parts] == [[2, 3]] * 5 + [[1, 3]]
    for p, e in zip(parts, np.array_split(x, [2, 4, 6, 8, 10])):
        burn.assert_result(p, e, kind)
    assert [p.dims()[0] for p in burn.tensor(data(kind, (100,)), kind).chunk(8, 0)] == [13] * 7 + [
        9
    ]
    assert len(burn.tensor(data(kind, (6,)), kind).chunk(7, 0)) == 6
    parts = t.split(4, 0)
    assert [p.dims()[0] for p in parts] == [4, 4, 3]
    burn.assert_result(parts[2], x[8:], kind)
    parts = t.split_with_sizes([1, 0, 10], 0)
    assert [p.dims()[0] for p in parts] == [1, 0, 10]
    burn.assert_result(parts[2], x[1:], kind)
    rows = list(t.iter_dim(1))
    assert len(rows) == 3
    for i, r in enumerate(rows):
        burn.assert_result(r, x[:, i : i + 1], kind)
    assert len(list(t)) == 11


@pytest.mark.parametrize("layout", ["contiguous", "permuted", "expanded"])
@pytest.mark.parametrize("kind", KINDS, ids=KIND_IDS)
def test_cat_stack(burn, kind, layout):
    a, ar = burn.view_input(data(kind, (2, 3), 5), kind, layout)
    b, br = burn.view_input(data(kind, (4, 3), 6), kind, "flipped")
    e, er = burn.view_input(data(kind, (0, 3), 7), kind)
    burn.assert_result(Tensor.cat([a, b, e], 0), np.concatenate([ar, br, er], 0), kind)
    c, cr = burn.view_input(data(kind, (2, 5), 8), kind)
    burn.assert_result(Tensor.cat([a, c], -1), np.concatenate([ar, cr], -1), kind)
    burn.assert_result(Tensor.cat([a], 1), ar, kind)
    d, dr = burn.view_input(data(kind, (2, 3), 9), kind)
    burn.assert_result(Tensor.stack([a, d], 0), np.stack([ar, dr], 0), kind)
    burn.assert_result(Tensor.stack([a, d, a], -1), np.stack([ar, dr, ar], -1), kind)
    burn.assert_result(Tensor.stack([a, d], 1), np.stack([ar, dr], 1), kind)


@pytest.mark.parametrize("layout", ["contiguous", "permuted", "strided"])
@pytest.mark.parametrize("kind", KINDS, ids=KIND_IDS)
def test_select_gather(burn, kind, layout):
    t, x = burn.view_input(data(kind, (4, 5), 10), kind, layout)
    idx = np.array([3, 0, 0, 2])
    burn.assert_result(t.select(0, burn.int(idx)), x[idx], kind)
    burn.assert_result(t.select(-1, burn.int([4, 1])), x[:, [4, 1]], kind)
    burn.assert_result(t.select(1, [2, 2, 0]), x[:, [2, 2, 0]], kind)
    burn.assert_result(t.select(0, burn.int(np.zeros(0, np.int64))), x[:0], kind)
    burn.assert_result(t[burn.int([1, 3])], x[[1, 3]], kind)
    gi = np.random.default_rng(1).integers(0, 5, (4, 7))
    burn.assert_result(t.gather(1, burn.int(gi)), np.take_along_axis(x, gi, 1), kind)
    gi0 = np.random.default_rng(2).integers(0, 4, (2, 5))
    burn.assert_result(
        t.gather(0, burn.int(gi0, layout="flipped")), np.take_along_axis(x, gi0, 0), kind
    )


@pytest.mark.parametrize("layout", ["contiguous", "flipped", "expanded"])
@pytest.mark.parametrize("kind", [Float, Int], ids=["float", "int"])
def test_select_assign_and_scatter_add(burn, kind, layout):
    t, x = burn.view_input(data(kind, (4, 3), 11), kind, layout)
    idx = np.array([1, 1, 3, 0, 1])
    v = data(kind, (5, 3), 12)
    expected = x.copy()
    np.add.at(expected, idx, burn.ref(v, kind))
    burn.assert_result(t.select_assign(0, burn.int(idx), burn.tensor(v, kind)), expected, kind)
    v1 = data(kind, (4, 2), 13)
    expected = x.copy()
    np.add.at(expected, (slice(None), np.array([2, 2])), burn.ref(v1, kind))
    burn.assert_result(t.select_assign(-1, [2, 2], burn.tensor(v1, kind)), expected, kind)
    # scatter ADDs, duplicates accumulate
    si = np.array([[1, 0, 2], [1, 1, 0]])
    sv = data(kind, (2, 3), 14)
    expected = x.copy()
    for i in range(2):
        for j in range(3):
            expected[si[i, j], j] += burn.ref(sv, kind)[i, j]
    burn.assert_result(t.scatter(0, burn.int(si), burn.tensor(sv, kind)), expected, kind)
    si1 = np.array([[2], [0], [1], [2]])
    sv1 = data(kind, (4, 1), 15)
    expected = x.copy()
    for i in range(4):
        expected[i, si1[i, 0]] += burn.ref(sv1, kind)[i, 0]
    burn.assert_result(t.scatter(1, burn.int(si1), burn.tensor(sv1, kind)), expected, kind)


def test_select_assign_bool_is_or(burn):
    t = burn.bool([True, False, True])
    out = t.select_assign(0, burn.int([0, 1, 0]), burn.bool([False, True, True]))
    burn.assert_equal(out, np.array([True, True, True]))
    out = burn.bool([True, False]).select_assign(0, burn.int([0, 0]), burn.bool([True, True]))
    burn.assert_equal(out, np.array([True, False]))


@pytest.mark.parametrize("layout", ["contiguous", "permuted", "expanded"])
@pytest.mark.parametrize("kind", KINDS, ids=KIND_IDS)
def test_mask_where_fill(burn, kind, layout):
    t, x = burn.view_input(data(kind, (3, 4), 16), kind, layout)
    m = np.random.default_rng(5).random((3, 4)) < 0.5
    v, vr = burn.view_input(data(kind, (3, 4), 17), kind)
    burn.assert_result(t.mask_where(burn.bool(m, "flipped"), v), np.where(m, vr, x), kind)
    # mask and values broadcast over size-1 dims
    m1 = np.array([[True, False, True, False]])
    v1, v1r = burn.view_input(data(kind, (3, 1), 18), kind)
    burn.assert_result(t.mask_where(burn.bool(m1), v1), np.where(m1, v1r, x), kind)
    fill = 5 if kind is not Bool else True
    burn.assert_result(t.mask_fill(burn.bool(m), fill), np.where(m, fill, x), kind)
    burn.assert_result(t.mask_fill(burn.bool(m1), fill), np.where(m1, fill, x), kind)


@pytest.mark.parametrize("kind", [Float, Int], ids=["float", "int"])
def test_pad(burn, kind):
    t, x = burn.view_input(data(kind, (2, 3, 4), 19), kind, "permuted")
    burn.assert_result(t.pad((1, 2)), np.pad(x, ((0, 0), (0, 0), (1, 2))), kind)
    burn.assert_result(
        t.pad((2, 1, 4, 3), 6), np.pad(x, ((0, 0), (4, 3), (2, 1)), constant_values=6), kind
    )
    burn.assert_result(
        t.pad((0, 0, 0, 0, 1, 1), 2), np.pad(x, ((1, 1), (0, 0), (0, 0)), constant_values=2), kind
    )


@pytest.mark.parametrize("diagonal", [0, 1, -1, 5, -5])
@pytest.mark.parametrize("kind", [Float, Int], ids=["float", "int"])
def test_tril_triu(burn, kind, diagonal):
    t, x = burn.view_input(data(kind, (2, 3, 4), 20), kind, "flipped")
    burn.assert_result(t.tril(diagonal), np.tril(x, diagonal), kind)
    burn.assert_result(t.triu(diagonal), np.triu(x, diagonal), kind)


@pytest.mark.parametrize("diagonal", [0, 1, -1])
def test_masks(burn, diagonal):
    shape = (3, 4)
    i, j = np.indices(shape)
    burn.assert_equal(Tensor.tril_mask(shape, diagonal, burn.device), j > i + diagonal)
    burn.assert_equal(Tensor.triu_mask(shape, diagonal, burn.device), j < i + diagonal)
    burn.assert_equal(Tensor.diag_mask(shape, diagonal, burn.device), j != i + diagonal)
    # the masks are what tril/triu zero out
    x = np.arange(12).reshape(shape) + 1
    t = burn.int(x)
    burn.assert_equal(
        t.mask_fill(Tensor.tril_mask(shape, diagonal, burn.device), 0), np.tril(x, diagonal)
    )


def test_argwhere_nonzero(burn):
    m = np.array([[True, False, True], [False, False, True]])
    t = burn.bool(m, "permuted")
    burn.assert_equal(t.argwhere(), np.argwhere(m).astype(np.int64))
    nz = t.nonzero()
    assert len(nz) == 2
    for got, e in zip(nz, np.nonzero(m)):
        burn.assert_equal(got, e.astype(np.int64))
    burn.assert_equal(burn.bool(np.zeros((2, 2), bool)).argwhere(), np.zeros((0, 2), np.int64))


@pytest.mark.parametrize("kind", [Float, Int], ids=["float", "int"])
def test_one_hot(burn, kind):
    idx = np.array([[0, 2], [1, 3]])
    t = burn.tensor(idx, kind)
    expected = np.eye(4)[idx]
    burn.assert_result(t.one_hot(4), expected, kind)
    burn.assert_close(Tensor.one_hot(2, 5, burn.device), np.eye(5)[2])
