"""Conformance: literal input/output pairs of module ops from Burn's own tests
(`crates/burn-tensor/src/tests/module/*.rs`) and small hand-computed cases."""

from __future__ import annotations

import numpy as np
from burn_tensor import Tolerance, module

# Burn's expectations are printed with 4 decimals
_T4 = Tolerance.rel_abs(0.0, 2e-4)


def _arange(shape):
    return np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)


def test_burn_max_pool2d_complex(burn):
    # maxpool2d.rs: test_max_pool2d_complex
    x = [
        [0.5388, 0.0676, 0.7122, 0.8316, 0.0653],
        [0.9154, 0.1536, 0.9089, 0.8016, 0.7518],
        [0.2073, 0.0501, 0.8811, 0.5604, 0.5075],
        [0.4384, 0.9963, 0.9698, 0.4988, 0.2609],
        [0.3391, 0.2230, 0.4610, 0.5365, 0.6880],
    ]
    out, idx = module.max_pool2d_with_indices(burn.float([[x]]), [4, 2], [1, 2], [2, 1], [1, 1])
    want = [
        [0.9154, 0.9089, 0.8316],
        [0.9154, 0.9089, 0.8316],
        [0.9154, 0.9963, 0.8316],
        [0.9154, 0.9963, 0.8016],
        [0.4384, 0.9963, 0.688],
        [0.4384, 0.9963, 0.688],
    ]
    burn.assert_close(out, [[want]])
    want_idx = [[5, 7, 3], [5, 7, 3], [5, 16, 3], [5, 16, 8], [15, 16, 24], [15, 16, 24]]
    burn.assert_equal(idx, np.array([[want_idx]]))


def test_burn_avg_pool2d(burn):
    # avgpool2d.rs: arange input, kernel [3, 4], stride [1, 2], padding [1, 2]
    x = burn.float(_arange((1, 1, 4, 6)))
    incl = [
        [7 / 6, 3, 13 / 3, 2.5],
        [3.25, 7.5, 9.5, 5.25],
        [6.25, 13.5, 15.5, 8.25],
        [31 / 6, 11, 37 / 3, 6.5],
    ]
    burn.assert_close(module.avg_pool2d(x, [3, 4], [1, 2], [1, 2], True), [[incl]])
    excl = [
        [3.5, 4.5, 6.5, 7.5],
        [6.5, 7.5, 9.5, 10.5],
        [12.5, 13.5, 15.5, 16.5],
        [15.5, 16.5, 18.5, 19.5],
    ]
    burn.assert_close(module.avg_pool2d(x, [3, 4], [1, 2], [1, 2], False), [[excl]])


def test_burn_bicubic_interpolate(burn):
    # bicubic_interpolate.rs
    out = module.interpolate(burn.float(_arange((1, 1, 45, 14))), [4, 6], "bicubic")
    want = [
        [0.0000, 2.5760, 5.2480, 7.7520, 10.4240, 13.0000],
        [204.8148, 207.3908, 210.0628, 212.5668, 215.2388, 217.8148],
        [411.1852, 413.7612, 416.4331, 418.9371, 421.6091, 424.1852],
        [616.0000, 618.576, 621.2479, 623.7519, 626.4239, 629.0000],
    ]
    tol = burn.literal_tol(_T4)
    burn.assert_close(out, [[want]], tol)
    out = module.interpolate(burn.float(_arange((2, 1, 7, 5))), [8, 7], "bicubic").numpy()
    head = [
        [0.0000, 0.5741, 1.3704, 2.0000, 2.6296, 3.4259, 4.0000],
        [4.0015, 4.5755, 5.3718, 6.0015, 6.6311, 7.4274, 8.0015],
        [8.3528, 8.9268, 9.7231, 10.3528, 10.9824, 11.7787, 12.3528],
    ]
    assert tol.close_mask(out[0, 0, :3], np.array(head)).all(), out[0, 0, :3]
    row = [65.0, 65.5741, 66.3704, 67.0, 67.6296, 68.4259, 69.0]
    assert tol.close_mask(out[1, 0, 7], np.array(row)).all(), out[1, 0, 7]


def test_interpolate_nearest_and_bilinear_hand_cases(burn):
    x = burn.float([[[[0.0, 1.0], [2.0, 3.0]]]])
    burn.assert_close(
        module.interpolate(x, [4, 4], "nearest"),
        [[[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [2, 2, 3, 3]]]],
    )
    burn.assert_close(
        module.interpolate(x, [3, 3], "bilinear"), [[[[0, 0.5, 1], [1, 1.5, 2], [2, 2.5, 3]]]]
    )
    # nearest downsampling keeps floor(dst * in / out): rows 0, 1, 3 of 5 for 3 outputs
    y = burn.float(_arange((1, 1, 5, 1)))
    burn.assert_close(module.interpolate(y, [3, 1], "nearest"), [[[[0.0], [1.0], [3.0]]]])
