"""Gradient-check rows of the 3-D module ops and deform_conv2d (issue 38 items 1-2): (op name,
fn(B, *xs), inputs). They are defaults over the 2-D ops and gathers, so Autodiff differentiates
them through their parts; each row checks that composed backward against central differences
(test_gradcheck_surface.py runs them with the rows of _autodiff_surface_cases.py)."""

from __future__ import annotations

import numpy as np
from _autodiff_testlib import distinct, u
from burn_tensor import ConvOptions, ConvTransposeOptions
from burn_tensor.module import DeformConvOptions

_RNG = np.random.default_rng(3801)

_C3 = ConvOptions((2, 1, 1), (1, 0, 1), (1, 2, 1), 2)
_CT3 = ConvTransposeOptions((2, 1, 2), (1, 0, 1), (1, 0, 1), (1, 2, 1), 2)
_DEF = DeformConvOptions((1, 2), (1, 0), (2, 1), 2, 2)


def _offsets():
    """Shifts whose sample points stay off the integer grid (floor's kinks) by >= 0.1, some
    reaching past the image's edges."""
    whole = _RNG.integers(-3, 3, (2, 2 * 2 * 6, 3, 2))
    return whole + _RNG.uniform(0.1, 0.9, whole.shape)


VOLUME_CASES = [
    ("conv3d", lambda B, x, w, b: B.conv3d(x, w, b, _C3), [u(2, 4, 4, 4, 3), u(4, 2, 2, 2, 2), u(4)]),
    (
        "conv_transpose3d",
        lambda B, x, w, b: B.conv_transpose3d(x, w, b, _CT3),
        [u(1, 4, 2, 3, 2), u(4, 1, 2, 2, 2), u(2)],
    ),
    (
        "avg_pool3d",
        lambda B, x: B.avg_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 0), False),
        [u(2, 2, 3, 5, 4)],
    ),
    (
        "avg_pool3d",
        lambda B, x: B.avg_pool3d(x, (3, 2, 2), (2, 1, 2), (1, 1, 1), True),
        [u(1, 2, 4, 3, 4)],
    ),
    (
        "max_pool3d",
        lambda B, x: B.max_pool3d(x, (2, 2, 3), (1, 2, 1), (1, 0, 1), (1, 1, 1)),
        [distinct(2, 2, 3, 4, 4)],
    ),
    (
        "max_pool3d_with_indices",
        lambda B, x: B.max_pool3d_with_indices(x, (3, 2, 2), (1, 1, 2), (1, 1, 0), (1, 2, 1))[0],
        [distinct(1, 2, 4, 5, 4)],
    ),
    (
        "adaptive_avg_pool3d",
        lambda B, x: B.adaptive_avg_pool3d(x, (2, 3, 2)),
        [u(2, 2, 3, 5, 4)],
    ),
    (
        "deform_conv2d",
        lambda B, x, off, w, m, b: B.deform_conv2d(x, off, w, m, b, _DEF),
        [u(2, 4, 5, 4), _offsets(), u(6, 2, 3, 2), u(2, 2 * 6, 3, 2), u(6)],
    ),
]
