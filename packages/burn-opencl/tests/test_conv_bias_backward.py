"""OpenCl's one-launch conv bias gradient (sum of the output gradient over batch and pixels,
per channel) on gradients that are views: an offset into a larger buffer, a non-contiguous
slice. Against numpy float64 sums.

A kernel that ignored the gradient's element offset passed every other test, because autodiff
hands the op freshly made (offset 0) gradients; here the offset is the point.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_opencl import OpenCl
from burn_opencl._array import ClArray

B = OpenCl("cpu")
RT = B._rt(None)


def _down(p):
    return B.float_into_data(p).array.astype(np.float64)


@pytest.mark.parametrize(
    "view",
    ["batch_tail", "channel_slice", "batch_middle"],
)
def test_bias_gradient_of_a_view_sums_exactly_the_viewed_elements(view):
    rng = np.random.default_rng(11)
    full = rng.normal(size=(4, 5, 3, 6)).astype(np.float32)
    g = ClArray.from_numpy(RT, full)
    if view == "batch_tail":  # contiguous, starting at element 5 * 3 * 6 of the buffer
        gv, ref = g.slice([slice(1, 4)]), full[1:4]
    elif view == "channel_slice":  # strided over the batch, offset by two channels
        gv, ref = g.slice([slice(0, 4), slice(2, 5)]), full[:, 2:5]
    else:
        gv, ref = g.slice([slice(2, 3)]), full[2:3]
    assert gv.offset > 0
    c = ref.shape[1]
    bias = ClArray.from_numpy(RT, np.zeros(c, np.float32))
    x = ClArray.from_numpy(RT, np.zeros((ref.shape[0], 2, 5, 8), np.float32))
    w = ClArray.from_numpy(RT, np.zeros((c, 2, 3, 3), np.float32))
    got = _down(B.conv2d_bias_backward(x, w, bias, gv))
    want = ref.astype(np.float64).sum(axis=(0, 2, 3))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
