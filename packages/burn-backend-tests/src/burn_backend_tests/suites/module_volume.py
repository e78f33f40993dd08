"""Conformance: the 3-D module ops (conv3d, conv_transpose3d, avg/max/adaptive-avg pool3d) and
deform_conv2d through `burn_tensor.module` (the user path, argument checks included) against the
float64 loops of `reference.volume`, over strides, padding, dilation, groups, output padding, bias
or none, both `count_include_pad` settings, max indices, offset/weight groups, a mask or none, and
non-contiguous inputs."""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import TensorCheckError, module

from .._ctx import sample
from ..reference import volume as ref
from .module_conv import assert_close_scaled


def _inputs(burn, shapes, seed, layout="contiguous"):
    """(tensors, float64 references rounded to the backend's dtype), "unit" values; a None
    shape gives None."""
    pairs = [
        (None, None) if sh is None else burn.view_input(sample(sh, "unit", seed + i), layout=lay)
        for i, (sh, lay) in enumerate(zip(shapes, [layout] + ["contiguous"] * len(shapes)))
    ]
    return [p[0] for p in pairs], [p[1] for p in pairs]

# (id, x shape, weight shape, stride, padding, dilation, groups, bias, layout)
CONV3D = [
    ("k333p1", (2, 2, 4, 4, 4), (3, 2, 3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, True,
     "contiguous"),
    ("s212g2", (1, 4, 5, 6, 5), (4, 2, 3, 2, 3), (2, 1, 2), (1, 0, 1), (1, 2, 1), 2, False,
     "permuted"),
    ("k1d2", (2, 3, 6, 3, 4), (2, 3, 2, 1, 2), (3, 1, 1), (0, 0, 1), (2, 1, 1), 1, True,
     "strided"),
]


@pytest.mark.parametrize("case", CONV3D, ids=[c[0] for c in CONV3D])
def test_conv3d(burn, case):
    _, xs, ws, s, p, d, g, bias, layout = case
    (t, wt, bt), (x, w, b) = _inputs(burn, [xs, ws, (ws[0],) if bias else None], 1, layout)
    out = module.conv3d(t, wt, bt, s, p, d, g)
    assert_close_scaled(burn, out, ref.conv3d(x, w, b, s, p, d, g))


# (id, x shape, weight shape, stride, padding, padding_out, dilation, groups, bias)
CONVT3D = [
    ("k222", (1, 2, 3, 3, 2), (2, 3, 2, 2, 2), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    ("s212po", (2, 4, 2, 3, 3), (4, 2, 3, 2, 3), (2, 1, 2), (1, 0, 1), (1, 0, 1), (1, 2, 1), 2,
     False),
]


@pytest.mark.parametrize("case", CONVT3D, ids=[c[0] for c in CONVT3D])
def test_conv_transpose3d(burn, case):
    _, xs, ws, s, p, po, d, g, bias = case
    (t, wt, bt), (x, w, b) = _inputs(burn, [xs, ws, (ws[1] * g,) if bias else None], 4)
    out = module.conv_transpose3d(t, wt, bt, s, p, po, d, g)
    assert_close_scaled(burn, out, ref.conv_transpose3d(x, w, b, s, p, po, d, g))


POOL3D = [
    ("k222", (2, 2, 4, 4, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), "contiguous"),
    ("k323s212p111", (1, 3, 5, 4, 6), (3, 2, 3), (2, 1, 2), (1, 1, 1), "permuted"),
]


@pytest.mark.parametrize("count_include_pad", [True, False], ids=["incl_pad", "excl_pad"])
@pytest.mark.parametrize("case", POOL3D, ids=[c[0] for c in POOL3D])
def test_avg_pool3d(burn, case, count_include_pad):
    _, shape, k, s, p, layout = case
    t, x = burn.view_input(sample(shape, "any", 7), layout=layout)
    out = module.avg_pool3d(t, k, s, p, count_include_pad)
    burn.assert_close(out, ref.avg_pool3d(x, k, s, p, count_include_pad), burn.loose)


def _distinct(shape, seed):
    n = int(np.prod(shape))
    return (np.random.default_rng(seed).permutation(n).reshape(shape) - n // 2) * 0.25


@pytest.mark.parametrize("dilation", [(1, 1, 1), (2, 1, 2)], ids=["d1", "d212"])
@pytest.mark.parametrize("case", POOL3D, ids=[c[0] for c in POOL3D])
def test_max_pool3d(burn, case, dilation):
    _, shape, k, s, p, layout = case
    t, x = burn.view_input(_distinct(shape, 8), layout=layout)
    want, want_idx = ref.max_pool3d_with_indices(x, k, s, p, dilation)
    out, idx = module.max_pool3d_with_indices(t, k, s, p, dilation)
    burn.assert_close(out, want, burn.loose)
    np.testing.assert_array_equal(idx.numpy(), want_idx)
    burn.assert_close(module.max_pool3d(t, k, s, p, dilation), want, burn.loose)


@pytest.mark.parametrize("out", [(2, 3, 2), (3, 1, 5), (4, 4, 4)], ids=str)
def test_adaptive_avg_pool3d(burn, out):
    t, x = burn.view_input(sample((2, 2, 4, 5, 4), "any", 9), layout="strided")
    burn.assert_close(module.adaptive_avg_pool3d(t, out), ref.adaptive_avg_pool3d(x, out),
                      burn.loose)


# (id, x, weight, stride, padding, dilation, weight_groups, offset_groups, mask, bias)
DEFORM = [
    ("v1", (1, 2, 5, 5), (3, 2, 3, 3), (1, 1), (1, 1), (1, 1), 1, 1, False, False),
    ("v2groups", (2, 4, 6, 5), (6, 2, 3, 2), (1, 2), (1, 0), (2, 1), 2, 2, True, True),
]


@pytest.mark.parametrize("case", DEFORM, ids=[c[0] for c in DEFORM])
def test_deform_conv2d(burn, case):
    _, xs, ws, s, p, d, gw, go, has_mask, has_bias = case
    ho = (xs[2] + 2 * p[0] - d[0] * (ws[2] - 1) - 1) // s[0] + 1
    wo = (xs[3] + 2 * p[1] - d[1] * (ws[3] - 1) - 1) // s[1] + 1
    taps = ws[2] * ws[3]
    mask_shape = (xs[0], go * taps, ho, wo) if has_mask else None
    (t, wt, mt, bt), (x, w, m, b) = _inputs(
        burn, [xs, ws, mask_shape, (ws[0],) if has_bias else None], 10
    )
    # shifts up to 3 pixels, off the integer grid: samples between pixels and past the edges
    off_t, off = burn.view_input(sample((xs[0], 2 * go * taps, ho, wo), "small", 12) * 1.5 + 0.05)
    out = module.deform_conv2d(t, off_t, wt, mt, bt, s, p, d, gw, go)
    assert_close_scaled(burn, out, ref.deform_conv2d(x, off, w, m, b, s, p, d, gw, go))


def test_volume_refusals(burn):
    x = burn.float(np.zeros((1, 2, 3, 3, 3)))
    with pytest.raises(TensorCheckError, match="rank-5 input"):
        module.conv3d(burn.float(np.zeros((1, 2, 3, 3))), burn.float(np.zeros((1, 2, 1, 1, 1))))
    with pytest.raises(TensorCheckError, match="weight in-channels"):
        module.conv3d(x, burn.float(np.zeros((1, 3, 1, 1, 1))))
    with pytest.raises(TensorCheckError, match="does not fit"):
        module.conv3d(x, burn.float(np.zeros((1, 2, 4, 1, 1))))
    with pytest.raises(TensorCheckError, match="padding_out"):
        module.conv_transpose3d(x, burn.float(np.zeros((2, 1, 2, 2, 2))), padding_out=1)
    with pytest.raises(TensorCheckError, match="at most half the kernel"):
        module.avg_pool3d(x, 2, padding=(0, 2, 0))
    with pytest.raises(TensorCheckError, match="output_size"):
        module.adaptive_avg_pool3d(x, (1, 0, 1))
    xi, wi = burn.float(np.zeros((1, 2, 4, 4))), burn.float(np.zeros((3, 2, 3, 3)))
    with pytest.raises(TensorCheckError, match=r"offset must be Float \[1, 18, 2, 2\]"):
        module.deform_conv2d(xi, burn.float(np.zeros((1, 9, 2, 2))), wi)
    with pytest.raises(TensorCheckError, match=r"mask must be Float \[1, 9, 2, 2\]"):
        module.deform_conv2d(xi, burn.float(np.zeros((1, 18, 2, 2))), wi,
                             burn.float(np.zeros((1, 18, 2, 2))))
