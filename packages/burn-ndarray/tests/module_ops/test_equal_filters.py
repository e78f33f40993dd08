"""Equal filters give bit-identical output channels (`_filter_classes`), on every conv path.

One BLAS sgemm rounds the rows of its product differently (on numpy's OpenBLAS, [128, 32] @
[32, 729] with equal rows gives 3 distinct rows), so without the filter classes these tests
fail. Values are also checked against the float64 reference of the conformance suite.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import _winograd
from burn_ndarray._filter_classes import filter_classes
from burn_tensor import module
from burn_backend_tests.reference import conv as ref


def _distinct_channels(out: np.ndarray, channels) -> int:
    return len({out[:, c].tobytes() for c in channels})


@pytest.mark.parametrize(
    ("c_in", "c_out", "kernel", "padding", "hw"),
    [
        (32, 128, 1, 0, 27),  # 1x1: the GEMM of squeezenet's expand layers
        (32, 128, 3, 1, 27),  # a shape Winograd takes
        (5, 40, 3, 0, 9),  # im2col, odd sizes, edge tiles
    ],
)
def test_equal_filters_equal_channels(env, rng, c_in, c_out, kernel, padding, hw):
    x = rng.random((2, c_in, hw, hw)) * 100
    w = np.full((c_out, c_in, kernel, kernel), 0.02)
    w[3] = 0.5  # one filter of its own in the middle
    b = np.full(c_out, 0.02)
    out = module.conv2d(env.t(x), env.t(w), env.t(b), padding=(padding, padding)).numpy()
    assert _distinct_channels(out, [c for c in range(c_out) if c != 3]) == 1
    env.close(out, ref.conv2d(x, w, b, (1, 1), (padding, padding), (1, 1), 1))


def test_winograd_shape_is_covered():
    """The 3x3 case above does reach Winograd (once its filters are reduced to two classes it
    is im2col's; before that, the dispatch is what the entry of conv2d sees)."""
    assert _winograd.suits((2, 32, 27, 27), (128, 32, 3, 3), (1, 1), (1, 1), (1, 1), 1, (27, 27))


def test_grouped_equal_filters_within_a_group(env, rng):
    g, c_in, c_out = 2, 8, 48
    x = rng.random((1, c_in, 11, 11)) * 10
    w = np.full((c_out, c_in // g, 3, 3), 0.25)
    w[c_out // 2 :] = -0.75  # the second group: its own value
    b = np.zeros(c_out)
    out = module.conv2d(env.t(x), env.t(w), env.t(b), groups=g).numpy()
    assert _distinct_channels(out, range(c_out // 2)) == 1
    assert _distinct_channels(out, range(c_out // 2, c_out)) == 1
    env.close(out, ref.conv2d(x, w, b, (1, 1), (0, 0), (1, 1), g))


def test_equal_weights_different_bias_stay_apart(env, rng):
    x = rng.random((1, 4, 6, 6))
    w = np.ones((6, 4, 1, 1))
    b = np.arange(6.0)
    out = module.conv2d(env.t(x), env.t(w), env.t(b)).numpy()
    env.close(out, ref.conv2d(x, w, b, (1, 1), (0, 0), (1, 1), 1))
    assert _distinct_channels(out, range(6)) == 6


def test_filter_classes_compares_bits():
    w = np.array([[0.0, 1.0], [-0.0, 1.0], [0.0, 1.0], [2.0, 3.0]], np.float32)
    keep, inverse = filter_classes(w)
    assert keep.tolist() == [0, 1, 3]  # -0.0 is its own class: its products' signs can differ
    assert inverse.tolist() == [0, 1, 0, 2]
    assert filter_classes(w[[0, 3]]) is None
    assert filter_classes(np.zeros((1, 4), np.float32)) is None
    keep, inverse = filter_classes(np.zeros((3, 2), np.float64), np.array([1.0, 2.0, 1.0]))
    assert keep.tolist() == [0, 1] and inverse.tolist() == [0, 1, 0]
