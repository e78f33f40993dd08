"""Conformance: convolution input/output pairs taken from Burn's own tests
(`crates/burn-tensor/src/tests/module/{conv1d,conv2d,conv_transpose1d,conv_transpose2d}.rs` and
`unfold4d.rs`) plus hand-derived ones. Inputs, weights and biases are `arange` tensors, as in
Burn."""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import Tolerance, module

_T = Tolerance.rel_abs(1e-5, 1e-3)


def _arange(shape):
    return np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)


def _run(burn, op, x_shape, w_shape, c_out, **options):
    x, w, b = (burn.float(_arange(s)) for s in (x_shape, w_shape, (c_out,)))
    return getattr(module, op)(x, w, b, **options)


# name -> (op, x shape, weight shape, c_out, options, expected)
CASES = {
    "conv1d_simple": (
        "conv1d", (2, 2, 4), (2, 2, 3), 2, {"padding": 1},
        [[[43, 67, 82, 49], [104, 176, 227, 158]], [[139, 187, 202, 113], [392, 584, 635, 414]]],
    ),
    "conv1d_dilation": (
        "conv1d", (2, 2, 4), (2, 2, 3), 2, {"padding": 1, "dilation": 2},
        [[[62, 38], [159, 111]], [[158, 102], [447, 367]]],
    ),
    "conv1d_groups": (
        "conv1d", (2, 2, 4), (2, 1, 3), 2, {"padding": 1, "groups": 2},
        [[[2, 5, 8, 3], [42, 63, 75, 47]], [[26, 29, 32, 11], [114, 159, 171, 103]]],
    ),
    "conv1d_complex": (
        "conv1d", (2, 3, 4), (4, 3, 3), 4, {"padding": 1, "stride": 2},
        [
            [[171, 294], [415, 781], [659, 1268], [903, 1755]],
            [[495, 726], [1387, 2185], [2279, 3644], [3171, 5103]],
        ],
    ),
    "conv2d_simple": (
        "conv2d", (1, 2, 4, 4), (2, 2, 3, 3), 2, {"padding": 1},
        [[
            [[1196, 1796, 1916, 1264], [1881, 2793, 2946, 1923],
             [2313, 3405, 3558, 2307], [1424, 2072, 2156, 1380]],
            [[2709, 4173, 4509, 3065], [4582, 7006, 7483, 5056],
             [5878, 8914, 9391, 6304], [4089, 6177, 6477, 4333]],
        ]],
    ),
    "conv2d_groups": (
        "conv2d", (1, 2, 5, 5), (2, 1, 3, 3), 2, {"groups": 2},
        [[
            [[312, 348, 384], [492, 528, 564], [672, 708, 744]],
            [[3724, 3841, 3958], [4309, 4426, 4543], [4894, 5011, 5128]],
        ]],
    ),
    "conv2d_complex": (
        "conv2d", (2, 3, 4, 5), (4, 3, 3, 2), 4,
        {"padding": [1, 2], "stride": [2, 3], "dilation": [1, 2]},
        [
            [
                [[1845, 3789, 1926], [3210, 6465, 3228]],
                [[4276, 9082, 4789], [8071, 16834, 8737]],
                [[6707, 14375, 7652], [12932, 27203, 14246]],
                [[9138, 19668, 10515], [17793, 37572, 19755]],
            ],
            [
                [[5445, 10629, 5166], [8070, 15645, 7548]],
                [[14356, 28882, 14509], [22651, 45454, 22777]],
                [[23267, 47135, 23852], [37232, 75263, 38006]],
                [[32178, 65388, 33195], [51813, 105072, 53235]],
            ],
        ],
    ),
    "conv_transpose1d_diff_channels": (
        "conv_transpose1d", (1, 3, 4), (3, 2, 3), 2, {"padding": 1},
        [[[270, 453, 516, 387], [352, 589, 679, 505]]],
    ),
    "conv_transpose1d_stride": (
        "conv_transpose1d", (1, 2, 4), (2, 2, 3), 2,
        {"padding": 1, "padding_out": 1, "stride": 2},
        [[[28, 62, 36, 78, 44, 94, 52, 62], [41, 93, 55, 121, 69, 149, 83, 93]]],
    ),
    "conv_transpose1d_dilation": (
        "conv_transpose1d", (1, 2, 4), (2, 2, 3), 2, {"padding": 1, "dilation": 2},
        [[[30, 64, 78, 76, 94, 52], [49, 101, 127, 113, 143, 77]]],
    ),
    "conv_transpose1d_groups": (
        "conv_transpose1d", (1, 2, 4), (2, 1, 3), 2, {"padding": 1, "groups": 2},
        [[[0, 1, 4, 7], [32, 59, 71, 59]]],
    ),
    "conv_transpose2d_simple": (
        "conv_transpose2d", (1, 1, 2, 2), (1, 1, 3, 3), 1, {"padding": 1},
        [[[[5, 11], [23, 29]]]],
    ),
    "conv_transpose2d_stride2": (
        "conv_transpose2d", (1, 1, 2, 2), (1, 1, 2, 2), 1, {"stride": 2},
        [[[[0, 0, 0, 1], [0, 0, 2, 3], [0, 2, 0, 3], [4, 6, 6, 9]]]],
    ),
    "conv_transpose2d_groups": (
        "conv_transpose2d", (1, 2, 2, 2), (2, 1, 3, 3), 2, {"padding": 1, "groups": 2},
        [[[[5, 11], [23, 29]], [[236, 258], [302, 324]]]],
    ),
    "conv_transpose2d_out_pad_dilation": (
        "conv_transpose2d", (1, 2, 2, 2), (2, 2, 3, 3), 2,
        {"padding": 1, "padding_out": 1, "dilation": 2},
        [[
            [[126, 116, 136, 124, 146], [108, 88, 114, 92, 120], [156, 140, 166, 148, 176],
             [126, 100, 132, 104, 138], [186, 164, 196, 172, 206]],
            [[217, 189, 227, 197, 237], [163, 125, 169, 129, 175], [247, 213, 257, 221, 267],
             [181, 137, 187, 141, 193], [277, 237, 287, 245, 297]],
        ]],
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_burn_conv_literals(burn, name):
    op, x_shape, w_shape, c_out, options, expected = CASES[name]
    # the literals as the float type holds them: conv2d_complex's 75263 overflows float16 to inf
    burn.assert_close(
        _run(burn, op, x_shape, w_shape, c_out, **options),
        burn.ref(expected),
        burn.literal_tol(_T),
    )


def test_conv2d_neighbourhood_sums(burn):
    # Hand-derived: 4x4 arange input, 3x3 ones kernel, padding 1 -> 3x3 neighbourhood sums.
    x = burn.float(_arange((1, 1, 4, 4)))
    out = module.conv2d(x, burn.float(np.ones((1, 1, 3, 3))), None, padding=1)
    expected = [[[[10, 18, 24, 18], [27, 45, 54, 39], [51, 81, 90, 63], [42, 66, 72, 50]]]]
    burn.assert_close(out, expected, burn.literal_tol(_T))


def test_conv_unfold4d_burn_ones(burn):
    # Burn's unfold4d test: ones [2, 3, 4, 4], kernel 2 -> ones [2, 12, 9]
    out = module.unfold4d(burn.float(np.ones((2, 3, 4, 4))), [2, 2])
    burn.assert_close(out, np.ones((2, 12, 9)))
