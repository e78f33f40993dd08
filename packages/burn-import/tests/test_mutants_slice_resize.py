"""Tests written for mutants of ONNX Slice and Resize that the suite let survive
(tools/mutation).

Slice: every start, end and step of a small grid (negative, out of range, INT64 extremes)
against numpy's slicing, which is how ONNX's reference implementation defines Slice. Resize:
the coordinate transforms ONNX's backend cases leave out (`tf_crop_and_resize` to one output
pixel, `half_pixel_symmetric` with a fractional output width) against ONNX's reference
implementation, in float64.
"""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import one_node, reference
from burn_import.onnx import backend, ops
from burn_ndarray import NdArray
from burn_tensor import Tensor
from onnx import TensorProto as T
from onnx import numpy_helper as nh

BIG = 2**63 - 1
BOUNDS = [-BIG - 1, -7, -5, -3, -1, 0, 1, 2, 4, 5, 7, BIG]


def test_slice_1d_grid_matches_numpy():
    d = NdArray(float_dtype="float64").device()
    x = np.arange(5.0)
    t = Tensor.from_data(x, d)
    for step in (-3, -2, -1, 1, 2, 3):
        for s in BOUNDS:
            for e in BOUNDS:
                got = ops.slice_(t, [s], [e], [0], [step]).numpy()
                np.testing.assert_array_equal(got, x[s:e:step], err_msg=f"[{s}:{e}:{step}]")


def test_slice_of_one_axis_keeps_the_others():
    d = NdArray(float_dtype="float64").device()
    x = np.arange(24.0).reshape(2, 3, 4)
    t = Tensor.from_data(x, d)
    np.testing.assert_array_equal(ops.slice_(t, [-2], [BIG], [-1], None).numpy(), x[:, :, -2:])
    np.testing.assert_array_equal(
        ops.slice_(t, [-1, 3], [-BIG - 1, 0], [1, 2], [-1, -2]).numpy(), x[:, ::-1, 3:0:-2]
    )


@pytest.mark.parametrize("step", [1, -1])
def test_slice_empty_on_one_axis_still_slices_the_next(step):
    d = NdArray(float_dtype="float64").device()
    x = np.arange(24.0).reshape(2, 3, 4)
    t = Tensor.from_data(x, d)
    s, e = (1, 1) if step == 1 else (0, 0)  # empty on axis 0 either way
    got = ops.slice_(t, [s, 1], [e, 3], [0, 2], [step, 1]).numpy()
    np.testing.assert_array_equal(got, x[s:e:step, :, 1:3])
    assert got.shape == (0, 3, 2)


def test_resize_to_zero_pixels_is_empty():
    x = np.ones((1, 1, 4))
    (got,) = backend.prepare(_resize_model(4, 0, mode="linear")).run([x])
    assert got.shape == (1, 1, 0)


def _resize_model(n_in: int, n_out: int, roi=None, scales=None, **attrs):
    inits = [nh.from_array(np.array(roi if roi is not None else [], np.float64), "roi")]
    if scales is not None:
        inits.append(nh.from_array(np.array(scales, np.float32), "scales"))
    else:
        inits += [
            nh.from_array(np.array([], np.float32), "scales"),
            nh.from_array(np.array([1, 1, n_out], np.int64), "sizes"),
        ]
    return one_node(
        "Resize",
        [("x", T.DOUBLE, [1, 1, n_in])],
        [("y", T.DOUBLE, [1, 1, n_out])],
        opset=19,
        inits=inits,
        **attrs,
    )


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_resize_tf_crop_and_resize_to_one_pixel_samples_the_roi_centre(mode):
    # one output pixel samples the middle of the crop: lo (n - 1) + (hi - lo) (n - 1) / 2
    x = np.array([[[1.0, 4.0, 9.0, 16.0, 25.0, 36.0]]])
    m = _resize_model(
        6,
        1,
        roi=[0, 0, 0.2, 1, 1, 0.7],
        mode=mode,
        coordinate_transformation_mode="tf_crop_and_resize",
    )
    (want,) = reference(m, {"x": x})
    (got,) = backend.prepare(m).run([x])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    if mode == "linear":  # x = 0.2 * 5 + 0.5 * 5 / 2 = 2.25: 9 + 0.25 * (16 - 9)
        np.testing.assert_allclose(got.ravel(), [10.75], rtol=1e-12)


@pytest.mark.parametrize("n_in,scale", [(5, 0.5), (7, 1.3), (6, 0.7)])
def test_resize_half_pixel_symmetric_with_a_fractional_width(n_in, scale):
    # output width n_in * scale is not an integer: the offset n_in / 2 (1 - n_out / width)
    # is not 0, and n_in / 2 is not n_in // 2 for odd n_in
    x = (np.arange(n_in, dtype=np.float64) ** 2).reshape(1, 1, n_in)
    m = _resize_model(
        n_in,
        int(n_in * scale),
        scales=[1.0, 1.0, scale],
        mode="linear",
        coordinate_transformation_mode="half_pixel_symmetric",
    )
    (want,) = reference(m, {"x": x})
    (got,) = backend.prepare(m).run([x])
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_resize_align_corners_to_one_pixel_takes_the_first():
    # width 1: no corners to align, ONNX samples position 0 (not 0 / 0)
    x = np.array([[[3.0, 5.0, 8.0, 13.0]]])
    m = _resize_model(4, 1, mode="linear", coordinate_transformation_mode="align_corners")
    (want,) = reference(m, {"x": x})
    (got,) = backend.prepare(m).run([x])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got.ravel(), [3.0])


def test_resize_exclude_outside_far_outside_the_roi_is_the_extrapolation_value():
    # crop positions so far outside the input that every cubic tap is excluded: the row of
    # weights sums to 0 and must not be divided by it (0 / 0), the extrapolation value shows
    x = (np.arange(6, dtype=np.float64) ** 2).reshape(1, 1, 6)
    m = _resize_model(
        6,
        4,
        roi=[0, 0, -3.0, 1, 1, 2.0],
        mode="cubic",
        exclude_outside=1,
        extrapolation_value=-7.0,
        coordinate_transformation_mode="tf_crop_and_resize",
    )
    (want,) = reference(m, {"x": x})
    with np.errstate(all="raise"):
        (got,) = backend.prepare(m).run([x])
    np.testing.assert_allclose(got, want, rtol=1e-6)  # the reference's cubic taps are float32


@pytest.mark.parametrize(
    "roi,n_out", [([-0.1, 1.0], 12), ([0.0, 1.0], 11)], ids=["starts-outside", "edges"]
)
def test_resize_extrapolates_outside_the_input_only(roi, n_out):
    # positions step by 0.5: from -0.5 (outside [0, n_in - 1]: the extrapolation value) then 0,
    # or from exactly 0 to exactly n_in - 1 = 5 (both ends inside: the end samples)
    x = (np.arange(6, dtype=np.float64) ** 2).reshape(1, 1, 6)
    m = _resize_model(
        6,
        n_out,
        roi=[0, 0, roi[0], 1, 1, roi[1]],
        mode="linear",
        extrapolation_value=-7.0,
        coordinate_transformation_mode="tf_crop_and_resize",
    )
    (want,) = reference(m, {"x": x})
    (got,) = backend.prepare(m).run([x])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    got = got.ravel()
    if roi[0] < 0:
        assert got[0] == -7.0 and got[1] == 0.0
    else:
        assert got[0] == 0.0 and got[-1] == 25.0 and (got != -7.0).all()


def test_slice_step_zero_is_refused():
    # ONNX forbids step 0 (it would never reach the end); it used to give an empty tensor
    t = Tensor.from_data(np.arange(5.0), NdArray(float_dtype="float64").device())
    with pytest.raises(ValueError, match="step 0"):
        ops.slice_(t, [1], [4], [0], [0])


@pytest.mark.parametrize("axis", [1, -2])
def test_slice_axis_outside_the_rank_is_refused(axis):
    t = Tensor.from_data(np.arange(5.0), NdArray(float_dtype="float64").device())
    with pytest.raises(ValueError, match=f"axis {axis} on a rank-1 tensor"):
        ops.slice_(t, [0], [2], [axis], [1])


def test_slice_axis_minus_rank_is_the_first_axis():
    # ONNX axes lie in [-rank, rank): -rank names axis 0
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = Tensor.from_data(x, NdArray().device())
    np.testing.assert_array_equal(ops.slice_(t, [1], [2], [-3], None).numpy(), x[1:2])
    with pytest.raises(ValueError, match="axis -4 on a rank-3 tensor"):
        ops.slice_(t, [0], [1], [-4], None)
