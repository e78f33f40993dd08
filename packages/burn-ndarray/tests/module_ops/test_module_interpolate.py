"""interpolate (nearest, bilinear, bicubic) and its backward vs per-pixel float64 references."""

from __future__ import annotations

import math

import numpy as np
import pytest
from burn_tensor import module
from burn_tensor.ops import InterpolateOptions


def _dot(a, b) -> float:
    return float(np.sum(np.asarray(a, np.float64) * np.asarray(b, np.float64)))


def _cubic(d, a=-0.75):
    d = abs(d)
    if d <= 1:
        return (a + 2) * d**3 - (a + 3) * d**2 + 1
    if d < 2:
        return a * d**3 - 5 * a * d**2 + 8 * a * d - 4 * a
    return 0.0


def ref_interpolate(x, out_hw, mode):
    """Per output pixel, as Burn's burn-ndarray kernels (align_corners=True for bi-linear/cubic)."""
    n, c, h, w = x.shape
    oh, ow = out_hw
    out = np.zeros((n, c, oh, ow))
    for y in range(oh):
        for xx in range(ow):
            if mode == "nearest":
                out[:, :, y, xx] = x[:, :, math.floor(y * h / oh), math.floor(xx * w / ow)]
                continue
            sy = y * (h - 1) / max(oh - 1, 1)
            sx = xx * (w - 1) / max(ow - 1, 1)
            y0, x0 = math.floor(sy), math.floor(sx)
            ty, tx = sy - y0, sx - x0
            if mode == "bilinear":
                y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
                out[:, :, y, xx] = (
                    x[:, :, y0, x0] * (1 - ty) * (1 - tx)
                    + x[:, :, y0, x1] * (1 - ty) * tx
                    + x[:, :, y1, x0] * ty * (1 - tx)
                    + x[:, :, y1, x1] * ty * tx
                )
                continue
            acc = 0.0
            for a in range(-1, 3):
                for b in range(-1, 3):
                    r = min(max(y0 + a, 0), h - 1)
                    q = min(max(x0 + b, 0), w - 1)
                    acc = acc + x[:, :, r, q] * _cubic(a - ty) * _cubic(b - tx)
            out[:, :, y, xx] = acc
    return out


SIZES = [
    ((2, 2, 5, 4), (7, 9)),
    ((1, 3, 8, 9), (3, 4)),
    ((1, 1, 4, 4), (4, 4)),
    ((2, 1, 1, 3), (2, 1)),
    ((1, 2, 6, 5), (11, 2)),
]
MODES = ["nearest", "bilinear", "bicubic"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sizes", SIZES)
def test_interpolate_matches_reference(env, rng, mode, sizes):
    shape, out_hw = sizes
    x = rng.standard_normal(shape)
    out = module.interpolate(env.t(x), list(out_hw), InterpolateOptions(mode))
    env.close(out, ref_interpolate(x, out_hw, mode))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sizes", SIZES)
def test_interpolate_backward_is_adjoint(env, rng, mode, sizes):
    shape, out_hw = sizes
    opts = InterpolateOptions(mode)
    x = env.p(rng.standard_normal(shape))
    y = env.backend.interpolate(x, out_hw, opts)
    g = env.p(rng.standard_normal(y.shape))
    dx = env.backend.interpolate_backward(x, g, out_hw, opts)
    assert dx.shape == x.shape and dx.dtype == env.dtype
    assert _dot(x, dx) == pytest.approx(_dot(y, g), rel=env.tol * 10, abs=env.tol * 10)


def _arange(shape):
    return np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)


def test_bicubic_burn_literals(env):
    # crates/burn-tensor/src/tests/module/bicubic_interpolate.rs (4-decimal expectations)
    out = module.interpolate(env.t(_arange((1, 1, 45, 14))), [4, 6], "bicubic").numpy()
    np.testing.assert_allclose(
        out,
        [
            [
                [
                    [0.0000, 2.5760, 5.2480, 7.7520, 10.4240, 13.0000],
                    [204.8148, 207.3908, 210.0628, 212.5668, 215.2388, 217.8148],
                    [411.1852, 413.7612, 416.4331, 418.9371, 421.6091, 424.1852],
                    [616.0000, 618.576, 621.2479, 623.7519, 626.4239, 629.0000],
                ]
            ]
        ],
        atol=2e-4,
    )
    out = module.interpolate(env.t(_arange((2, 1, 7, 5))), [8, 7], "bicubic").numpy()
    np.testing.assert_allclose(
        out[0, 0, :3],
        [
            [0.0000, 0.5741, 1.3704, 2.0000, 2.6296, 3.4259, 4.0000],
            [4.0015, 4.5755, 5.3718, 6.0015, 6.6311, 7.4274, 8.0015],
            [8.3528, 8.9268, 9.7231, 10.3528, 10.9824, 11.7787, 12.3528],
        ],
        atol=2e-4,
    )
    np.testing.assert_allclose(
        out[1, 0, 7], [65.0, 65.5741, 66.3704, 67.0, 67.6296, 68.4259, 69.0], atol=2e-4
    )


def test_nearest_and_bilinear_hand_cases(env):
    x = env.t(np.array([[[[0.0, 1.0], [2.0, 3.0]]]]))
    env.close(
        module.interpolate(x, [4, 4], "nearest"),
        [[[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [2, 2, 3, 3]]]],
    )
    env.close(
        module.interpolate(x, [3, 3], "bilinear"), [[[[0, 0.5, 1], [1, 1.5, 2], [2, 2.5, 3]]]]
    )
