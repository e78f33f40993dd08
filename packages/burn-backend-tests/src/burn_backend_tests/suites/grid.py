"""Conformance: the grid family (`burn_tensor.grid`, `Tensor.cartesian_grid`,
`Tensor.grid_sample_2d`).

grid_sample_2d is checked against the per-pixel float64 reference (`reference.grid`, torch's
definition) for every mode, padding mode and align_corners, over view layouts of the input;
nearest-mode grids sit a quarter pixel off the rounding ties so every dtype picks the same pixel.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from burn_tensor import (
    Bool,
    Float,
    GridSampleOptions,
    Int,
    Tensor,
    TensorCheckError,
    Tolerance,
    grid,
)

from .._ctx import sample
from ..reference import grid as ref

IN_SHAPE = (2, 3, 5, 4)
OUT_HW = (4, 6)


def _grid(mode, align_corners, seed):
    """A [n, ho, wo, 2] grid reaching past the input's edges (so padding modes matter)."""
    n, _, h, w = IN_SHAPE
    g = np.random.default_rng(seed)
    if mode == "bilinear":
        return g.uniform(-1.8, 1.8, (n, *OUT_HW, 2))
    # nearest: pixel coordinates k + 0.25 (k from -3 to size + 2), mapped back to [-1, 1] units
    out = np.empty((n, *OUT_HW, 2))
    for axis, size in ((0, w), (1, h)):
        p = g.integers(-3, size + 3, (n, *OUT_HW)) + 0.25
        out[..., axis] = 2 * p / (size - 1) - 1 if align_corners else (2 * p + 1) / size - 1
    return out


def _tol(burn):
    """The suite's loose tolerance; in half precision the sampling positions themselves round
    (pixel coordinates near 4 keep 2^-8 of a pixel in float16, 2^-5 in bfloat16), which moves a
    bilinear result by |image gradient| (up to ~5 here) times that."""
    if burn.fdt.size >= 4:
        return burn.loose
    if burn.fdt.value == "bfloat16":
        return Tolerance.rel_abs(1e-1, 2e-1)
    return Tolerance.rel_abs(5e-2, 5e-2)


_LAYOUTS = ("contiguous", "permuted", "strided")
# every option combination once, the input layouts taking turns (each layout meets each mode)
CASES = [
    (*c, _LAYOUTS[i % 3])
    for i, c in enumerate(itertools.product(ref.MODES, ref.PADDINGS, (False, True)))
]


@pytest.mark.parametrize(
    "mode,padding,align,layout", CASES, ids=["-".join(map(str, c)) for c in CASES]
)
def test_grid_sample_2d(burn, mode, padding, align, layout):
    x, xr = burn.view_input(sample(IN_SHAPE, "any", 1), layout=layout)
    g, gr = burn.view_input(_grid(mode, align, 2), layout="flipped")
    out = x.grid_sample_2d(g, GridSampleOptions(mode, padding, align))
    burn.assert_close(out, ref.grid_sample_2d(xr, gr, mode, padding, align), _tol(burn))


def test_grid_sample_2d_defaults_and_literals(burn):
    x = burn.float([[[[1.0, 2.0], [3.0, 4.0]]]])
    # default: bilinear, zeros, align_corners=False; the center is the mean, a corner of the
    # image (-1, -1) reads a quarter of the corner pixel
    g = burn.float([[[[0.0, 0.0], [-1.0, -1.0], [1.0, 1.0]]]])
    burn.assert_close(x.grid_sample_2d(g), [[[[2.5, 0.25, 1.0]]]], burn.tol)
    burn.assert_close(x.grid_sample_2d(g, "bilinear"), [[[[2.5, 0.25, 1.0]]]], burn.tol)
    aligned = GridSampleOptions("bilinear", "zeros", True)
    burn.assert_close(x.grid_sample_2d(g, aligned), [[[[2.5, 1.0, 4.0]]]], burn.tol)


def test_grid_sample_2d_far_and_nan_coordinates_read_zero(burn):
    x = burn.float(sample((1, 2, 3, 3), "any", 3))
    g = np.array([[[[1e30, 0.0], [0.0, -np.inf], [np.nan, 0.2], [5.0, 5.0]]]])
    for mode in ref.MODES:
        out = x.grid_sample_2d(burn.float(g), mode)
        burn.assert_close(out, np.zeros((1, 2, 1, 4)), burn.tol)


def test_grid_sample_2d_refusals(burn):
    x = burn.float(np.ones((1, 1, 2, 2)))
    with pytest.raises(TensorCheckError, match=r"grid must be \[n, ho, wo, 2\]"):
        x.grid_sample_2d(burn.float(np.zeros((1, 2, 2, 3))))
    with pytest.raises(TensorCheckError, match="batch sizes differ"):
        x.grid_sample_2d(burn.float(np.zeros((2, 2, 2, 2))))
    with pytest.raises(TensorCheckError, match="mode must be one of"):
        x.grid_sample_2d(burn.float(np.zeros((1, 2, 2, 2))), "bicubic")


@pytest.mark.parametrize("kind", [Float, Int, Bool])
def test_meshgrid(burn, kind):
    a = np.array([0.0, 1.0, 3.0]) if kind is not Bool else np.array([True, False, True])
    b = np.array([2.0, 5.0]) if kind is not Bool else np.array([False, True])
    ta, tb = burn.tensor(a, kind), burn.tensor(b, kind, layout="flipped")
    ra, rb = burn.ref(a, kind), burn.ref(b, kind)
    for indexing, np_ix in (("matrix", "ij"), ("cartesian", "xy")):
        for sparsity in ("dense", "sparse"):
            outs = grid.meshgrid([ta, tb], grid.GridOptions(indexing, sparsity))
            want = np.meshgrid(ra, rb, indexing=np_ix, sparse=sparsity == "sparse")
            for o, wnt in zip(outs, want):
                burn.assert_result(o, wnt, kind)
    stacked = grid.meshgrid_stack([ta, tb], grid.IndexPos.Last)
    burn.assert_result(stacked, np.stack(np.meshgrid(ra, rb, indexing="ij"), -1), kind)
    three = grid.meshgrid([ta, tb, ta], grid.GridIndexing.Cartesian)
    want3 = np.meshgrid(ra, rb, ra, indexing="xy")
    for o, wnt in zip(three, want3):
        burn.assert_result(o, wnt, kind)


def test_cartesian_grid(burn):
    got = Tensor.cartesian_grid([2, 3, 1], burn.device)
    want = np.stack(np.meshgrid(np.arange(2), np.arange(3), np.arange(1), indexing="ij"), -1)
    burn.assert_equal(got, want, Int)
    burn.assert_equal(Tensor.cartesian_grid([3], burn.device), [[0], [1], [2]], Int)


@pytest.mark.parametrize("dims", [(2, 3, 4, 5), (1, 1, 1, 3), (3, 2, 2, 1)], ids=str)
def test_affine_grid_2d(burn, dims):
    t, tr = burn.view_input(sample((dims[0], 2, 3), "any", 4), layout="permuted")
    burn.assert_close(grid.affine_grid_2d(t, dims), ref.affine_grid_2d(tr, dims), _tol(burn))
    # the identity transform samples an image back onto itself (align_corners=True)
    ident = burn.float(np.tile(np.array([[1.0, 0, 0], [0, 1.0, 0]]), (dims[0], 1, 1)))
    img, ir = burn.view_input(sample(dims, "any", 5))
    opts = GridSampleOptions(align_corners=True)
    back = img.grid_sample_2d(grid.affine_grid_2d(ident, dims), opts)
    burn.assert_close(back, ir, _tol(burn))
