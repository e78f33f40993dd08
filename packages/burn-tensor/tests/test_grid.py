"""`burn_tensor.grid`, `Tensor.cartesian_grid`, `Tensor.grid_sample_2d`: argument checks and
hand-derived values (every backend's numerics are in the conformance suite's `grid` module)."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_tensor import GridSampleOptions, Tensor, TensorCheckError, grid

DEV = NdArray(float_dtype="float64").device()


def t(x):
    return Tensor.from_data(np.asarray(x, dtype=np.float64), DEV)


def test_options_refuse_unknown_modes():
    with pytest.raises(ValueError, match="mode must be one of"):
        GridSampleOptions("bicubic")
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        GridSampleOptions(padding_mode="wrap")
    with pytest.raises(ValueError, match="indexing"):
        grid.GridOptions(indexing="ij")
    opts = GridSampleOptions().with_padding_mode("border").with_align_corners(True)
    assert (opts.mode, opts.padding_mode, opts.align_corners) == ("bilinear", "border", True)


def test_hand_derived_samples():
    x = t([[[[1.0, 2.0], [3.0, 4.0]]]])
    # align_corners=False: x = 0.5 is pixel coordinate 1.0 (the right column's center)
    g = t([[[[0.5, -0.5], [2.0, 0.0], [-1.0, 0.0]]]])
    assert x.grid_sample_2d(g).tolist() == [[[[2.0, 0.0, 1.0]]]]
    # (y = 0 is pixel row 0.5: the mean of the rows.) border clamps x = 2.0 (pixel 2.5) to
    # column 1; reflection folds pixel 2.5 about the edge at 1.5 to 0.5, between the columns
    assert x.grid_sample_2d(g, GridSampleOptions(padding_mode="border")).tolist() == [
        [[[2.0, 3.0, 2.0]]]
    ]
    assert x.grid_sample_2d(g, GridSampleOptions(padding_mode="reflection")).tolist() == [
        [[[2.0, 2.5, 2.0]]]
    ]
    # nearest rounds half to even: pixel coordinate 0.5 -> 0
    assert x.grid_sample_2d(t([[[[0.0, -0.5]]]]), "nearest").tolist() == [[[[1.0]]]]


def test_grid_sample_checks_name_the_problem():
    x = t(np.ones((1, 1, 2, 2)))
    with pytest.raises(TensorCheckError, match=r"input must be \[n, c, h, w\]"):
        t(np.ones((2, 2))).grid_sample_2d(t(np.zeros((1, 1, 1, 2))))
    with pytest.raises(TensorCheckError, match="grid must be Float"):
        x.grid_sample_2d(t(np.zeros((1, 1, 1, 2))).int())
    with pytest.raises(TensorCheckError, match="options must be"):
        x.grid_sample_2d(t(np.zeros((1, 1, 1, 2))), 3)


def test_meshgrid_and_affine_checks():
    with pytest.raises(TensorCheckError, match="expected 1-D"):
        grid.meshgrid([t([1.0]), t([[1.0]])])
    with pytest.raises(TensorCheckError, match="at least one"):
        grid.meshgrid([])
    with pytest.raises(TensorCheckError, match="is Int, tensor 0 Float"):
        grid.meshgrid([t([1.0]), t([1.0]).int()])
    with pytest.raises(TensorCheckError, match=r"shape \[2, 2, 3\]"):
        grid.affine_grid_2d(t(np.zeros((1, 2, 3))), (2, 1, 3, 3))
    with pytest.raises(TensorCheckError, match="4 positive ints"):
        grid.affine_grid_2d(t(np.zeros((1, 2, 3))), (1, 3, 3))
    with pytest.raises(TensorCheckError, match="non-negative ints"):
        Tensor.cartesian_grid([2, -1], DEV)


def test_affine_grid_of_a_scale():
    # scale 0.5 in x: the 3 columns at -1, 0, 1 land at -0.5, 0, 0.5
    g = grid.affine_grid_2d(t([[[0.5, 0.0, 0.0], [0.0, 1.0, 0.0]]]), (1, 1, 1, 3))
    assert g.tolist() == [[[[-0.5, 0.0], [0.0, 0.0], [0.5, 0.0]]]]


def test_facade_path():
    import burn.tensor.grid as facade

    assert facade.meshgrid is grid.meshgrid
