"""Conformance: `interpolate` (nearest, bilinear, bicubic) and its backward primitive.

Forward through `burn_tensor.module.interpolate`; `interpolate_backward` on the backend with
primitives. References (`reference.interp`) are per output pixel with explicit taps and weights, so
they also pin the align_corners=True coordinates and Burn's edge clamping; the backward is checked
against the explicit scatter of each output's grad onto its taps and through the adjoint identity.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import InterpolateOptions, module

from .._ctx import sample
from .._prim import adjoint, prim, wrap
from ..reference import interp as ref

# (id, input shape, output size, input layout): up/down-sampling, non-square, size 1 both ways
SIZES = [
    ("up_5x4_to_7x9", (2, 2, 5, 4), (7, 9), "contiguous"),
    ("down_8x9_to_3x4", (1, 3, 8, 9), (3, 4), "permuted"),
    ("same_4x4", (1, 1, 4, 4), (4, 4), "flipped"),
    ("from_1x3_to_2x1", (2, 1, 1, 3), (2, 1), "strided"),
    ("mixed_6x5_to_11x2", (1, 2, 6, 5), (11, 2), "expanded"),
    ("to_1x5", (2, 2, 3, 7), (1, 5), "contiguous"),
    ("up_5x9_to_9x17", (1, 2, 5, 9), (9, 17), "permuted"),
]


def _size(sid):
    return next(c[1:] for c in SIZES if c[0] == sid)


@pytest.mark.parametrize("sid", [c[0] for c in SIZES])
@pytest.mark.parametrize("mode", ref.MODES)
def test_interpolate(burn, mode, sid):
    shape, out_hw, layout = _size(sid)
    t, x = burn.view_input(sample(shape, "any", 11), layout=layout)
    out = module.interpolate(t, list(out_hw), InterpolateOptions(mode))
    burn.assert_close(out, ref.interpolate(x, out_hw, mode), burn.loose)
    # the mode may also be given by name
    burn.assert_close(module.interpolate(t, list(out_hw), mode), out.numpy(), burn.loose)


@pytest.mark.parametrize("sid", [c[0] for c in SIZES])
@pytest.mark.parametrize("mode", ref.MODES)
def test_interpolate_backward(burn, mode, sid):
    shape, out_hw, _ = _size(sid)
    opts = InterpolateOptions(mode)
    x = burn.ref(sample(shape, "any", 12))
    g = burn.ref(sample(shape[:2] + out_hw, "any", 13))
    xp = prim(burn, x)
    dx = wrap(burn, burn.backend.interpolate_backward(xp, prim(burn, g), out_hw, opts))
    burn.assert_close(dx, ref.interpolate_backward(shape, g, mode), burn.loose)
    y = wrap(burn, burn.backend.interpolate(xp, out_hw, opts)).numpy()
    adjoint(burn, y, dx.numpy(), x, g)


@pytest.mark.parametrize("mode", ref.MODES)
def test_interpolate_nan_reaches_only_its_taps(burn, mode):
    # Sizes whose source coordinates are exact in binary (steps 0.5, 1 and 2), so every backend
    # agrees on which taps each output reads. (No inf: where a tap's weight is 0, inf * 0 makes
    # NaN or not depending on which cells a kernel reads at t == 0, which Burn leaves open.)
    x = sample((2, 2, 5, 4), "any", 14)
    x[0, 0, 2, 1] = np.nan
    x[1, 1, 4, 3] = np.nan
    x[1, 0, 0, 0] = np.nan
    t, xr = burn.view_input(x, layout="strided")
    for out_hw in ((9, 7), (3, 4), (5, 4)):
        out = module.interpolate(t, list(out_hw), mode)
        burn.assert_close(out, ref.interpolate(xr, out_hw, mode), burn.loose)
    big = sample((1, 2, 9, 7), "any", 15)
    big[0, 1, 4, 2] = np.nan
    t, xr = burn.view_input(big)
    burn.assert_close(
        module.interpolate(t, [5, 4], mode), ref.interpolate(xr, (5, 4), mode), burn.loose
    )


@pytest.mark.parametrize("mode", ref.MODES)
def test_interpolate_empty_batch(burn, mode):
    t = burn.float(np.zeros((0, 3, 4, 5)))
    out = module.interpolate(t, [6, 2], mode)
    burn.assert_close(out, np.zeros((0, 3, 6, 2)))
    dx = burn.backend.interpolate_backward(
        t.into_primitive(), out.into_primitive(), (6, 2), InterpolateOptions(mode)
    )
    burn.assert_close(wrap(burn, dx), np.zeros((0, 3, 4, 5)))


def test_interpolate_options_name_the_modes():
    with pytest.raises(ValueError, match="nearest"):
        InterpolateOptions("trilinear")
