"""Conv3d, ConvTranspose3d, the 3-D pools and DeformConv2d (issue 38 items 1-2): padding configs,
values against float64 loops (`burn_backend_tests.reference.volume`) and hand-derived identities,
config round trips, and PyTorch (and torchvision) within 1e-5 in float32 where importable.

The ops themselves are checked on every backend by the conformance suite
(`burn_backend_tests/suites/module_volume.py`) and by finite differences (burn-autodiff's rows).
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_backend_tests.reference import volume as ref
from burn_ndarray import NdArray
from burn_nn import (
    AdaptiveAvgPool3dConfig,
    AvgPool3dConfig,
    Conv3dConfig,
    ConvTranspose3dConfig,
    DeformConv2dConfig,
    MaxPool3dConfig,
    PaddingConfig3d,
)
from burn_tensor import Tensor, module

D64 = NdArray(float_dtype="float64").device()
D32 = NdArray().device()
RNG = np.random.default_rng(3838)


def t64(a):
    return Tensor.from_data(np.asarray(a, np.float64), D64)


def test_padding_config3d_variants():
    assert PaddingConfig3d.Explicit(1, 2, 3).values == (1, 2, 3, 1, 2, 3)
    assert PaddingConfig3d.coerce(2) == PaddingConfig3d.Explicit(2, 2, 2, 2, 2, 2)
    assert PaddingConfig3d.Same.pads([5, 6, 7], [3, 2, 4], [1, 2, 1], [1, 1, 1]) == [
        (1, 1), (0, 0), (1, 2)
    ]
    with pytest.raises(ValueError, match="PaddingConfig3d.Explicit takes 3 or 6"):
        PaddingConfig3d.Explicit(1, 2)


def test_conv3d_same_padding_matches_loops():
    conv = Conv3dConfig([2, 3], [3, 2, 3]).with_padding(PaddingConfig3d.Same).init(D64)
    x = RNG.normal(size=(2, 2, 5, 4, 6))
    got = conv.forward(t64(x)).numpy()
    # Same with an even kernel (2): one row of zeros after, none before
    xp = np.pad(x, ((0, 0), (0, 0), (0, 0), (0, 1), (0, 0)))
    w, b = conv.weight.val().numpy(), conv.bias.val().numpy()
    want = ref.conv3d(xp, w, b, (1, 1, 1), (1, 0, 1), (1, 1, 1), 1)
    assert got.shape == (2, 3, 5, 4, 6)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_conv3d_ones_counts_the_window():
    x = Tensor.ones([1, 1, 3, 3, 3], D64)
    got = module.conv3d(x, Tensor.ones([1, 1, 3, 3, 3], D64), padding=1).numpy()[0, 0]
    # a corner sees 2*2*2 cells, an edge 2*2*3, a face 2*3*3, the centre 27
    assert got[0, 0, 0] == 8 and got[0, 0, 1] == 12 and got[0, 1, 1] == 18 and got[1, 1, 1] == 27


def test_conv_transpose3d_matches_loops():
    conv = ConvTranspose3dConfig([4, 6], [2, 3, 2]).with_stride([2, 1, 2]).with_groups(2)
    conv = conv.with_padding([1, 1, 0]).with_padding_out([1, 0, 0]).init(D64)
    x = RNG.normal(size=(1, 4, 3, 3, 2))
    w, b = conv.weight.val().numpy(), conv.bias.val().numpy()
    want = ref.conv_transpose3d(x, w, b, (2, 1, 2), (1, 1, 0), (1, 0, 0), (1, 1, 1), 2)
    np.testing.assert_allclose(conv.forward(t64(x)).numpy(), want, rtol=1e-12, atol=1e-12)


def test_pools3d():
    x = RNG.normal(size=(2, 3, 5, 6, 4))
    mp = MaxPool3dConfig([2, 3, 2]).with_strides([1, 2, 2]).init()
    want, _ = ref.max_pool3d_with_indices(x, (2, 3, 2), (1, 2, 2), (0, 0, 0), (1, 1, 1))
    np.testing.assert_allclose(mp.forward(t64(x)).numpy(), want)
    ap = AvgPool3dConfig([3, 3, 3]).with_strides([2, 2, 2]).with_padding(
        PaddingConfig3d.Explicit(1, 1, 1)
    ).with_count_include_pad(False).init()
    want = ref.avg_pool3d(x, (3, 3, 3), (2, 2, 2), (1, 1, 1), False)
    np.testing.assert_allclose(ap.forward(t64(x)).numpy(), want, rtol=1e-12)
    gp = AdaptiveAvgPool3dConfig([1, 1, 1]).init()
    np.testing.assert_allclose(
        gp.forward(t64(x)).numpy(), x.mean(axis=(2, 3, 4), keepdims=True), rtol=1e-12
    )


def test_deform_conv2d_zero_offsets_is_conv2d():
    deform = DeformConv2dConfig([2, 4], [3, 3]).with_padding([1, 1]).init(D64)
    x = t64(RNG.normal(size=(2, 2, 5, 6)))
    zeros = Tensor.zeros([2, 18, 5, 6], D64)
    want = module.conv2d(x, deform.weight.val(), deform.bias.val(), padding=1)
    np.testing.assert_allclose(
        deform.forward(x, zeros).numpy(), want.numpy(), rtol=1e-12, atol=1e-12
    )


def test_deform_conv2d_integer_shift_and_mask():
    """Every tap shifted one column right reads x one column right: a conv of the shifted input
    (zeros past the edge); a mask of 0.5 halves the result before the bias."""
    deform = DeformConv2dConfig([1, 2], [2, 2]).with_bias(False).init(D64)
    x = RNG.normal(size=(1, 1, 4, 5))
    off = np.zeros((1, 8, 3, 4))
    off[:, 1::2] = 1.0
    w = deform.weight.val().numpy()
    shifted = np.concatenate([x[..., 1:], np.zeros((1, 1, 4, 1))], axis=-1)
    want = ref.conv3d(shifted[:, :, None], w[:, :, None], None, (1, 1, 1), (0, 0, 0),
                      (1, 1, 1), 1)[:, :, 0]
    np.testing.assert_allclose(deform.forward(t64(x), t64(off)).numpy(), want, atol=1e-12)
    half = t64(np.full((1, 4, 3, 4), 0.5))
    np.testing.assert_allclose(deform.forward(t64(x), t64(off), half).numpy(), want / 2,
                               atol=1e-12)


def test_config_json_round_trip():
    cfg = Conv3dConfig([2, 4], [3, 3, 3]).with_padding(PaddingConfig3d.Explicit(1, 0, 2))
    assert type(cfg).from_json(cfg.to_json()) == cfg
    pool = MaxPool3dConfig([2, 2, 2]).with_padding(PaddingConfig3d.Same)
    assert type(pool).from_json(pool.to_json()) == pool


def test_against_torch_f32():
    """Where torch is installed: the modules match torch's (and torchvision's deform_conv2d)
    within 1e-5 in float32 with the same weights."""
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = RNG.normal(size=(2, 4, 5, 6, 5)).astype(np.float32)
    tx = torch.from_numpy(x)
    bx = Tensor.from_data(x, D32)
    conv = Conv3dConfig([4, 6], [3, 2, 3]).with_stride([2, 1, 1]).with_groups(2).with_padding(
        PaddingConfig3d.Explicit(1, 0, 1)
    ).init(D32)
    want = F.conv3d(tx, torch.from_numpy(conv.weight.val().numpy()),
                    torch.from_numpy(conv.bias.val().numpy()), stride=(2, 1, 1), padding=(1, 0, 1),
                    groups=2)
    np.testing.assert_allclose(conv.forward(bx).numpy(), want.numpy(), atol=1e-5, rtol=1e-5)
    tconv = ConvTranspose3dConfig([4, 2], [3, 3, 2]).with_stride([2, 2, 1]).with_padding(
        [1, 0, 1]).with_padding_out([1, 1, 0]).init(D32)
    want = F.conv_transpose3d(tx, torch.from_numpy(tconv.weight.val().numpy()),
                              torch.from_numpy(tconv.bias.val().numpy()), stride=(2, 2, 1),
                              padding=(1, 0, 1), output_padding=(1, 1, 0))
    np.testing.assert_allclose(tconv.forward(bx).numpy(), want.numpy(), atol=1e-5, rtol=1e-5)
    mp = MaxPool3dConfig([3, 2, 3]).with_strides([2, 1, 2]).with_padding(
        PaddingConfig3d.Explicit(1, 1, 1)).init()
    want = F.max_pool3d(tx, (3, 2, 3), (2, 1, 2), (1, 1, 1))
    np.testing.assert_allclose(mp.forward(bx).numpy(), want.numpy(), atol=1e-6)
    for cip in (True, False):
        ap = AvgPool3dConfig([3, 2, 3]).with_strides([2, 1, 2]).with_padding(
            PaddingConfig3d.Explicit(1, 1, 1)).with_count_include_pad(cip).init()
        want = F.avg_pool3d(tx, (3, 2, 3), (2, 1, 2), (1, 1, 1), count_include_pad=cip)
        np.testing.assert_allclose(ap.forward(bx).numpy(), want.numpy(), atol=1e-5)
    want = F.adaptive_avg_pool3d(tx, (3, 4, 2))
    np.testing.assert_allclose(AdaptiveAvgPool3dConfig([3, 4, 2]).init().forward(bx).numpy(),
                               want.numpy(), atol=1e-5)
    tv = pytest.importorskip("torchvision")
    x2 = RNG.normal(size=(2, 4, 6, 5)).astype(np.float32)
    deform = DeformConv2dConfig([4, 6], [3, 2]).with_padding([1, 0]).with_offset_groups(2) \
        .with_weight_groups(2).init(D32)
    off = (RNG.normal(size=(2, 24, 6, 4)) * 1.5).astype(np.float32)
    mask = RNG.uniform(size=(2, 12, 6, 4)).astype(np.float32)
    want = tv.ops.deform_conv2d(torch.from_numpy(x2), torch.from_numpy(off),
                                torch.from_numpy(deform.weight.val().numpy()),
                                torch.from_numpy(deform.bias.val().numpy()), padding=(1, 0),
                                mask=torch.from_numpy(mask))
    got = deform.forward(Tensor.from_data(x2, D32), Tensor.from_data(off, D32),
                         Tensor.from_data(mask, D32))
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-5, rtol=1e-5)
