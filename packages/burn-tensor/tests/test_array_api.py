"""`burn_tensor.array_api`: the ops written once over an array namespace, run here on a namespace
that is not numpy itself (a stand-in with numpy's functions, as cupy is to burn_cuda), so the
generic code paths run, not NdArray's numpy-only fast paths. Values against numpy float64 or
hand-derived results."""

from __future__ import annotations

import types

import numpy as np
from burn_tensor.array_api import array_ops, interpolation, make_numeric, sum_dtype

XP = types.SimpleNamespace(**{n: getattr(np, n) for n in dir(np) if not n.startswith("__")})


class _Self:
    """The backend argument the ops take as `self` (only `int_dtype` is read)."""

    int_dtype = types.SimpleNamespace(np=np.dtype(np.int64))


def test_array_ops_layout_and_indexing_on_a_foreign_namespace():
    ops = array_ops(XP)
    x = np.arange(6.0).reshape(2, 3)
    assert ops["permute"](None, x, (1, 0)).tolist() == x.T.tolist()
    got = ops["slice"](None, x, [slice(0, 2, -1), slice(1, 3, 1)])  # a negative step: reversed
    assert got.tolist() == [[4.0, 5.0], [1.0, 2.0]]
    out = ops["slice_assign"](None, x, [slice(0, 1, 1), slice(0, 3, 1)], np.zeros((1, 3)))
    assert out.tolist() == [[0.0, 0.0, 0.0], [3.0, 4.0, 5.0]] and x[0, 1] == 1.0  # input unchanged
    got = ops["gather"](None, 1, x, np.array([[2, 0], [1, 1]]))
    assert got.tolist() == [[2.0, 0.0], [4.0, 4.0]]
    assert ops["repeat_dim"](None, x, 0, 2).shape == (4, 3)


def test_numeric_ops_follow_burn_semantics_on_a_foreign_namespace():
    ints = make_numeric("int", XP)
    a, b = np.array([-7, 7, -7, 6]), np.array([2, -2, -2, 4])
    assert ints["div"](None, a, b).tolist() == [-3, -3, 3, 1]  # toward zero, as Rust
    assert ints["mean_dim"](None, np.array([[-3, -4]]), 1).tolist() == [[-3]]  # -7 / 2 -> -3
    floats = make_numeric("float", XP)
    x = np.array([[3.0, 1.0, 3.0, 2.0]])
    vals, idx = floats["sort_with_indices"](_Self(), x, 1, descending=True)
    assert vals.tolist() == [[3.0, 3.0, 2.0, 1.0]] and idx.tolist() == [[0, 2, 3, 1]]  # stable
    x16 = np.full((64, 3), 0.1, np.float16)
    got = floats["sum_dim"](None, x16, 0)
    assert got.dtype == np.float16 and sum_dtype(np.dtype(np.float16)) == np.float32
    assert abs(float(got[0, 0]) - 64 * float(np.float16(0.1))) <= 0.01


def test_interpolation_values_and_adjoint():
    # bilinear, align_corners: 2 -> 3 columns puts the middle output halfway between the inputs
    x = np.array([[[[0.0, 4.0]]]])
    got = interpolation.interpolate(x, (1, 3), "bilinear", XP)
    assert got.tolist() == [[[[0.0, 2.0, 4.0]]]]
    # backward is the exact adjoint: <interp(x), g> == <x, interp_backward(g)>
    rng = np.random.default_rng(0)
    for mode in ("nearest", "bilinear", "bicubic"):
        x = rng.normal(size=(2, 3, 4, 5))
        g = rng.normal(size=(2, 3, 7, 3))
        lhs = np.sum(interpolation.interpolate(x, (7, 3), mode, XP) * g)
        rhs = np.sum(x * interpolation.interpolate_backward(x, g, (7, 3), mode, XP))
        assert abs(lhs - rhs) <= 1e-9 * max(1.0, abs(lhs)), mode
