"""Conformance: tensor odds and ends of Burn 0.20 — `pad` (constant, reflect, edge), `take`,
`slice_dim`, `max_abs_dims`, `one_hot_fill` — against numpy (`np.pad`, `np.take`, slicing).
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import Bool, Float, Int, PadMode, TensorCheckError

from .._ctx import sample

PAD_CASES = [
    ((2, 1), "reflect", "reflect"),
    ((1, 2, 2, 0), "reflect", "reflect"),
    ((3, 0, 1, 2), "edge", "edge"),
    ((0, 2), PadMode.Edge, "edge"),
    ((1, 1, 2, 2), PadMode.Reflect, "reflect"),
    ((1, 2, 0, 1), PadMode.Constant(1.5), "constant"),
]


def _np_pad(x, pads, np_mode, value=0.0):
    width = [(0, 0)] * x.ndim
    for i in range(len(pads) // 2):
        width[x.ndim - 1 - i] = (pads[2 * i], pads[2 * i + 1])
    if np_mode == "constant":
        return np.pad(x, width, mode="constant", constant_values=value)
    return np.pad(x, width, mode=np_mode)


@pytest.mark.parametrize("kind", [Float, Int])
@pytest.mark.parametrize(
    "pads,mode,np_mode,layout",
    [(*c, ("contiguous", "permuted", "strided")[i % 3]) for i, c in enumerate(PAD_CASES)],
    ids=[f"{c[0]}-{c[2]}" for c in PAD_CASES],
)
def test_pad_modes(burn, kind, pads, mode, np_mode, layout):
    x = sample((2, 4, 5), "int", 1)
    t, xr = burn.view_input(x, kind, layout=layout)
    value = 1.5 if kind is Float else 1
    if isinstance(mode, PadMode) and mode.mode == "constant":
        mode = PadMode.Constant(value)
    want = _np_pad(xr, pads, np_mode, value)
    burn.assert_result(t.pad(pads, mode), want, kind)


def test_pad_burn_literals(burn):
    # Burn's pad.rs doc examples
    t = burn.float([[12.0, -2.0, 3.0], [5.0, 3.0, 6.0]])
    reflect = [[-2.0, 12.0, -2.0, 3.0, -2.0], [3.0, 5.0, 3.0, 6.0, 3.0]]
    burn.assert_close(t.pad((1, 1, 0, 0), PadMode.Reflect), reflect)
    edge = [[12.0, 12.0, -2.0, 3.0, 3.0], [5.0, 5.0, 3.0, 6.0, 6.0]]
    burn.assert_close(t.pad((1, 1, 0, 0), PadMode.Edge), edge)
    with pytest.raises(TensorCheckError, match="smaller than its size"):
        t.pad((3, 0), "reflect")
    with pytest.raises(TensorCheckError, match="mode must be one of"):
        t.pad((1, 0), "wrap")


@pytest.mark.parametrize("kind", [Float, Int, Bool])
def test_take(burn, kind):
    x = sample((3, 4, 2), "int", 2)
    if kind is Bool:
        x = x > 0
    t, xr = burn.view_input(x, kind, layout="permuted")
    for dim, idx in ((1, [[0, 3], [2, 2], [1, 0]]), (0, [2, 0]), (-1, [[[1]], [[0]]])):
        want = np.take(xr, np.asarray(idx), axis=dim)
        burn.assert_result(t.take(dim, idx), want, kind)
    ti = burn.int(np.array([[3, 1]]))
    burn.assert_result(t.take(1, ti), np.take(xr, np.array([[3, 1]]), axis=1), kind)


def test_take_refuses_out_of_range(burn, burn_checks_on):
    with pytest.raises(TensorCheckError, match="out of range"):
        burn.float(np.ones((2, 3))).take(1, [0, 3])


def test_slice_dim_and_max_abs_dims(burn):
    t, xr = burn.view_input(sample((3, 4, 5), "any", 3), layout="flipped")
    burn.assert_close(t.slice_dim(1, slice(1, 3)), xr[:, 1:3], burn.tol)
    burn.assert_close(t.slice_dim(2, slice(0, 5, 2)), xr[:, :, 0:5:2], burn.tol)
    burn.assert_close(t.slice_dim(0, 1), xr[1:2], burn.tol)
    burn.assert_close(t.slice_dim(-1, range(1, 4)), xr[..., 1:4], burn.tol)
    want = np.max(np.abs(xr), axis=(0, 2), keepdims=True)
    burn.assert_close(t.max_abs_dims([0, -1]), want, burn.tol)
    ti, ir = burn.view_input(sample((2, 3), "int", 4), Int)
    burn.assert_equal(ti.max_abs_dims([1, 0]), np.max(np.abs(ir), keepdims=True), Int)


@pytest.mark.parametrize("kind", [Float, Int])
@pytest.mark.parametrize("axis", [-1, 0, 1, -2])
def test_one_hot_fill(burn, kind, axis):
    idx = np.array([[0, 2, -1], [1, -3, 2]])
    t = burn.tensor(idx, kind)
    on, off = (5.0, -0.5) if kind is Float else (7, -2)
    n = 3
    wrapped = np.where(idx < 0, idx + n, idx)
    onehot = np.where(wrapped[..., None] == np.arange(n), on, off)  # class dim last
    ax = axis if axis >= 0 else axis + idx.ndim + 1
    want = np.moveaxis(onehot, -1, ax)
    burn.assert_result(t.one_hot_fill(n, on, off, axis), want, kind)


def test_one_hot_fill_refusals(burn, burn_checks_on):
    t = burn.int(np.array([0, 3]))
    with pytest.raises(TensorCheckError, match="out of range"):
        t.one_hot_fill(3, 1, 0)
    with pytest.raises(TensorCheckError, match="axis 3 out of range"):
        t.one_hot_fill(4, 1, 0, 3)


def test_transaction(burn):
    from burn_tensor import Transaction

    f, fr = burn.view_input(sample((3, 4), "any", 5), layout="permuted")
    i, ir = burn.view_input(sample((5,), "int", 6), Int, layout="flipped")
    b = burn.bool(sample((2, 3), "any", 7) > 0)
    g, gr = burn.view_input(sample((2, 1, 3), "any", 8), layout="strided")
    e = burn.float(np.zeros((0, 3)))
    datas = Transaction().register(f).register(i).register(b).register(e).register(g).execute()
    assert len(datas) == 5
    want = [fr, ir, sample((2, 3), "any", 7) > 0, np.zeros((0, 3)), gr]
    for d, w in zip(datas, want):
        assert tuple(d.array.shape) == w.shape
        np.testing.assert_array_equal(np.asarray(d.array).astype(w.dtype), w)
    assert datas[0].dtype is burn.fdt and datas[1].dtype is burn.idt
    # the same reads as one by one
    assert datas[4].array.tolist() == g.to_data().array.tolist()
    assert Transaction().execute() == []


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64"])
def test_unsigned_int_dtypes(burn, dtype):
    from burn_tensor import DType, Tensor

    dt = DType.from_any(dtype)
    big = {"uint8": 250, "uint16": 65000, "uint32": 4_000_000_000, "uint64": 2**63 + 5}[dtype]
    x = np.array([[0, 3, 7], [12, 1, 5]], dtype=dt.np)
    t = Tensor.from_data(x, burn.device, dt)
    assert t.dtype is dt and t.kind is Int
    np.testing.assert_array_equal(t.to_data().array, x)
    np.testing.assert_array_equal((t + 2).to_data().array, x + 2)
    np.testing.assert_array_equal((t * t).to_data().array, x * x)
    np.testing.assert_array_equal(t.sum_dim(1).to_data().array, x.sum(1, keepdims=True))
    np.testing.assert_array_equal(t.max_dim(0).to_data().array, x.max(0, keepdims=True))
    np.testing.assert_array_equal(t.greater_elem(4).to_data().array, x > 4)
    # values past the signed range of the same width survive a round trip
    hi = Tensor.from_data(np.array([big, 1], dtype=dt.np), burn.device, dt)
    assert hi.to_data().array.tolist() == [big, 1]
    # casts between the backend's int dtype and the unsigned one keep in-range values
    back = t.cast(burn.idt)
    burn.assert_equal(back, x.astype(np.int64), Int)
    np.testing.assert_array_equal(back.cast(dt).to_data().array, x)
    burn.assert_close(t.float(), x.astype(np.float64))
