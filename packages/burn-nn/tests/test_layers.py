"""Layer numerics against independent numpy float64 references written here."""

import math

import numpy as np
import pytest
from burn_tensor import Tensor

from burn_nn import (
    AdaptiveAvgPool1dConfig,
    AdaptiveAvgPool2dConfig,
    AvgPool1dConfig,
    AvgPool2dConfig,
    BatchNormConfig,
    DropoutConfig,
    EmbeddingConfig,
    GroupNormConfig,
    InstanceNormConfig,
    LayerNormConfig,
    LinearConfig,
    LinearLayout,
    MaxPool1dConfig,
    MaxPool2dConfig,
    PaddingConfig1d,
    PaddingConfig2d,
    RmsNormConfig,
)
from burn_nn.conv import Conv1dConfig, Conv2dConfig, ConvTranspose1dConfig, ConvTranspose2dConfig


def T(a, d):
    return Tensor.from_data(np.asarray(a, dtype=np.float64), d)


def close(t, ref, tol=1e-9):
    np.testing.assert_allclose(t.numpy(), ref, rtol=tol, atol=tol)


# -- numpy references ---------------------------------------------------------------------------
def ref_conv2d(x, w, b, stride, pad, dil, groups):
    n, c, h, wd = x.shape
    co, cig, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    ho = (h + 2 * pad[0] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (wd + 2 * pad[1] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, co, ho, wo))
    per = co // groups
    for o in range(co):
        g = o // per
        for i in range(ho):
            for j in range(wo):
                patch = xp[
                    :,
                    g * cig : (g + 1) * cig,
                    i * stride[0] : i * stride[0] + dil[0] * (kh - 1) + 1 : dil[0],
                    j * stride[1] : j * stride[1] + dil[1] * (kw - 1) + 1 : dil[1],
                ]
                out[:, o, i, j] = (patch * w[o]).sum(axis=(1, 2, 3))
    return out + (0 if b is None else b.reshape(1, -1, 1, 1))


def ref_conv_transpose2d(x, w, b, stride, pad, pad_out, dil):
    n, ci, h, wd = x.shape
    _, co, kh, kw = w.shape
    full_h = (h - 1) * stride[0] + dil[0] * (kh - 1) + 1 + pad_out[0]
    full_w = (wd - 1) * stride[1] + dil[1] * (kw - 1) + 1 + pad_out[1]
    out = np.zeros((n, co, full_h, full_w))
    for i in range(h):
        for j in range(wd):
            for a in range(kh):
                for c in range(kw):
                    out[:, :, i * stride[0] + a * dil[0], j * stride[1] + c * dil[1]] += np.einsum(
                        "nc,co->no", x[:, :, i, j], w[:, :, a, c]
                    )
    out = out[:, :, pad[0] : full_h - pad[0], pad[1] : full_w - pad[1]]
    return out + (0 if b is None else b.reshape(1, -1, 1, 1))


def ref_pool2d(x, k, s, pad, fn, fill):
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])), constant_values=fill)
    ho = (xp.shape[2] - k[0]) // s[0] + 1
    wo = (xp.shape[3] - k[1]) // s[1] + 1
    out = np.zeros(x.shape[:2] + (ho, wo))
    for i in range(ho):
        for j in range(wo):
            out[:, :, i, j] = fn(
                xp[:, :, i * s[0] : i * s[0] + k[0], j * s[1] : j * s[1] + k[1]], axis=(2, 3)
            )
    return out


# -- tests ----------------------------------------------------------------------------------------
def test_linear_numerics_and_layout(dev64, rng):
    lin = LinearConfig(5, 3).init(dev64)
    assert lin.weight.dims() == [5, 3] and lin.bias.dims() == [3]
    x = rng.normal(size=(2, 4, 5))
    close(lin.forward(T(x, dev64)), x @ lin.weight.val().numpy() + lin.bias.val().numpy())
    col = LinearConfig(5, 3, layout=LinearLayout.Col, bias=False).init(dev64)
    assert col.weight.dims() == [3, 5]
    close(col.forward(T(x, dev64)), x @ col.weight.val().numpy().T)


@pytest.mark.parametrize(
    "stride,pad,dil,groups", [([1, 1], [0, 0], [1, 1], 1), ([2, 1], [1, 2], [1, 2], 2)]
)
def test_conv2d_numerics(dev64, rng, stride, pad, dil, groups):
    conv = Conv2dConfig(
        [4, 6],
        [3, 2],
        stride=stride,
        dilation=dil,
        groups=groups,
        padding=PaddingConfig2d.Explicit(*pad),
    ).init(dev64)
    assert conv.weight.dims() == [6, 4 // groups, 3, 2]
    x = rng.normal(size=(2, 4, 7, 8))
    ref = ref_conv2d(
        x, conv.weight.val().numpy(), conv.bias.val().numpy(), stride, pad, dil, groups
    )
    close(conv.forward(T(x, dev64)), ref)


def test_conv2d_same_padding_keeps_size_and_matches_asymmetric_reference(dev64, rng):
    conv = Conv2dConfig([1, 2], [3, 3], padding=PaddingConfig2d.Same).init(dev64)
    x = rng.normal(size=(1, 1, 6, 6))
    assert conv.forward(T(x, dev64)).dims() == [1, 2, 6, 6]
    even = Conv2dConfig([1, 1], [2, 2], padding=PaddingConfig2d.Same, bias=False).init(dev64)
    # total pad 1: nothing before, one row/col after (ONNX SAME_UPPER)
    xp = np.pad(x, ((0, 0), (0, 0), (0, 1), (0, 1)))
    close(
        even.forward(T(x, dev64)),
        ref_conv2d(xp, even.weight.val().numpy(), None, [1, 1], [0, 0], [1, 1], 1),
    )


def test_conv1d_numerics(dev64, rng):
    conv = Conv1dConfig(3, 4, 3, stride=2, padding=PaddingConfig1d.Explicit(1)).init(dev64)
    x = rng.normal(size=(2, 3, 9))
    ref = ref_conv2d(
        x[:, :, None, :],
        conv.weight.val().numpy()[:, :, None, :],
        conv.bias.val().numpy(),
        [1, 2],
        [0, 1],
        [1, 1],
        1,
    )[:, :, 0, :]
    close(conv.forward(T(x, dev64)), ref)
    assert Conv1dConfig(3, 4, 3, padding=PaddingConfig1d.Same).init(dev64).forward(
        T(x, dev64)
    ).dims() == [2, 4, 9]


def test_conv_transpose_numerics(dev64, rng):
    ct = ConvTranspose2dConfig(
        [3, 2], [3, 2], stride=[2, 1], padding=[1, 0], padding_out=[1, 0]
    ).init(dev64)
    assert ct.weight.dims() == [3, 2, 3, 2]
    x = rng.normal(size=(2, 3, 4, 5))
    ref = ref_conv_transpose2d(
        x, ct.weight.val().numpy(), ct.bias.val().numpy(), [2, 1], [1, 0], [1, 0], [1, 1]
    )
    close(ct.forward(T(x, dev64)), ref)
    ct1 = ConvTranspose1dConfig([3, 2], 3, stride=2).init(dev64)
    x1 = rng.normal(size=(2, 3, 5))
    ref1 = ref_conv_transpose2d(
        x1[:, :, None, :],
        ct1.weight.val().numpy()[:, :, None, :],
        ct1.bias.val().numpy(),
        [1, 2],
        [0, 0],
        [0, 0],
        [1, 1],
    )[:, :, 0, :]
    close(ct1.forward(T(x1, dev64)), ref1)


def test_pools_numerics(dev64, rng):
    x = rng.normal(size=(2, 3, 6, 7))
    mp = MaxPool2dConfig([2, 3]).init()
    assert mp.strides == [2, 3]
    close(mp.forward(T(x, dev64)), ref_pool2d(x, [2, 3], [2, 3], [0, 0], np.max, -np.inf))
    mp2 = MaxPool2dConfig([3, 3], strides=[1, 2], padding=PaddingConfig2d.Explicit(1, 1)).init()
    close(mp2.forward(T(x, dev64)), ref_pool2d(x, [3, 3], [1, 2], [1, 1], np.max, -np.inf))
    ap = AvgPool2dConfig([2, 2], strides=[1, 1], padding=PaddingConfig2d.Explicit(1, 1)).init()
    close(ap.forward(T(x, dev64)), ref_pool2d(x, [2, 2], [1, 1], [1, 1], np.mean, 0.0))
    x1 = rng.normal(size=(2, 3, 8))
    close(MaxPool1dConfig(2).init().forward(T(x1, dev64)), x1.reshape(2, 3, 4, 2).max(-1))
    close(AvgPool1dConfig(4).init().forward(T(x1, dev64)), x1.reshape(2, 3, 2, 4).mean(-1))
    assert MaxPool1dConfig(3, ceil_mode=True).init().forward(T(x1, dev64)).dims() == [2, 3, 3]


def test_adaptive_pools(dev64, rng):
    x = rng.normal(size=(2, 3, 6, 9))
    close(
        AdaptiveAvgPool2dConfig([2, 3]).init().forward(T(x, dev64)),
        x.reshape(2, 3, 2, 3, 3, 3).mean((3, 5)),
    )
    x1 = rng.normal(size=(2, 3, 5))
    out = AdaptiveAvgPool1dConfig(2).init().forward(T(x1, dev64))
    close(out, np.stack([x1[..., 0:3].mean(-1), x1[..., 2:5].mean(-1)], -1))


def test_batch_norm_eval_uses_running_stats(dev64, rng):
    bn = BatchNormConfig(3).init(dev64)
    x = rng.normal(size=(4, 3, 5))
    close(bn.forward(T(x, dev64)), x / math.sqrt(1 + 1e-5), 1e-9)


def test_batch_norm_training_on_autodiff(autodiff, rng):
    bn = BatchNormConfig(3, momentum=0.2).init(autodiff)
    x = rng.normal(size=(4, 3, 5, 2)) * 3 + 1
    out = bn.forward(T(x, autodiff))
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    ref = (x - mean.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-5)
    close(out.inner(), ref, 1e-8)
    close(bn.running_mean.val().inner(), 0.8 * 0 + 0.2 * mean, 1e-9)
    close(bn.running_var.val().inner(), 0.8 * 1 + 0.2 * var, 1e-9)
    # valid(): eval behaviour with the updated running stats
    v = bn.valid()
    xv = T(x, v.devices()[0])
    close(
        v.forward(xv),
        (x - (0.2 * mean).reshape(1, 3, 1, 1))
        / np.sqrt((0.8 + 0.2 * var).reshape(1, 3, 1, 1) + 1e-5),
        1e-8,
    )


def test_layer_rms_group_instance_norm(dev64, rng):
    x = rng.normal(size=(2, 4, 6))
    ln = LayerNormConfig(6).init(dev64)
    close(
        ln.forward(T(x, dev64)),
        (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5),
    )
    assert LayerNormConfig(6, bias=False).init(dev64).beta is None
    rms = RmsNormConfig(6).init(dev64)
    close(rms.forward(T(x, dev64)), x / np.sqrt((x**2).mean(-1, keepdims=True) + 1e-5))
    g = x.reshape(2, 2, 12)
    ref = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(
        x.shape
    )
    close(GroupNormConfig(2, 4).init(dev64).forward(T(x, dev64)), ref)
    ref_i = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    close(InstanceNormConfig(4).init(dev64).forward(T(x, dev64)), ref_i)
    assert InstanceNormConfig(4, affine=False).init(dev64).num_params() == 0


def test_embedding(dev64):
    emb = EmbeddingConfig(10, 4).init(dev64)
    idx = np.array([[1, 2], [9, 0]])
    close(emb.forward(Tensor.from_ints(idx, dev64)), emb.weight.val().numpy()[idx])


def test_dropout_only_on_autodiff(dev64, autodiff):
    x = np.ones((200, 50))
    close(DropoutConfig(0.5).init().forward(T(x, dev64)), x)
    autodiff.seed(1)
    out = DropoutConfig(0.5).init().forward(T(x, autodiff)).inner().numpy()
    assert set(np.unique(out)) <= {0.0, 2.0}
    assert abs((out == 0).mean() - 0.5) < 0.03
    assert DropoutConfig(0.0).init().forward(T(x, autodiff)).inner().numpy().min() == 1.0


def test_dropout_values_and_gradient(autodiff):
    # Burn's x * mask * (1 / keep): each kept value is x times 1 / keep in one rounding, and the
    # gradient of a sum is the scaled mask (hand-derived: d(x m s)/dx = m s)
    keep = 0.7
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 2.0, (64, 40))  # no zeros, so a zero output means dropped
    autodiff.seed(2)
    xt = T(x, autodiff).require_grad()
    out = DropoutConfig(1.0 - keep).init().forward(xt)
    o = out.inner().numpy()
    kept = o != 0.0
    assert abs(kept.mean() - keep) < 0.03
    np.testing.assert_array_equal(o[kept], x[kept] * (1.0 / keep))
    g = out.sum().backward()
    grad = xt.grad(g).numpy()
    np.testing.assert_array_equal(grad, np.where(kept, 1.0 / keep, 0.0))
