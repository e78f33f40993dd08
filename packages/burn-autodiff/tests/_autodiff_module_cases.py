"""Gradient-check rows of module ops (linear, conv, pools, interpolate, unfold)."""

from __future__ import annotations

from _autodiff_testlib import distinct, u
from burn_tensor import ConvOptions, ConvTransposeOptions, DType, InterpolateOptions, UnfoldOptions

C2 = ConvOptions((2, 1), (1, 0), (1, 1), 1)
C2G = ConvOptions((1, 1), (1, 1), (2, 1), 2)
CT2 = ConvTransposeOptions((2, 1), (1, 0), (1, 0), (1, 1), 1)
C1 = ConvOptions((2,), (1,), (1,), 1)
CT1 = ConvTransposeOptions((2,), (1,), (1,), (1,), 1)



def _dropout(B, x):
    """`dropout` with the device re-seeded at each evaluation: the same mask for the finite
    differences and the rule (which multiplies by the op's own mask output)."""
    B.seed(11)
    return B.dropout(x, 0.4)[0]


MODULE_CASES = [
    ("dropout", _dropout, [u(4, 5)]),
    ("linear", lambda B, x, w, b: B.linear(x, w, b), [u(3, 4), u(4, 2), u(2)]),
    ("linear", lambda B, x, w, b: B.linear(x, w, b), [u(2, 3, 4), u(4, 5), u(5)]),
    ("linear", lambda B, x, w: B.linear(x, w, None), [u(4), u(4, 3)]),
    # autocast's linear with float64 as its "half" dtype: the casts are the identity, so finite
    # differences check the rule's wiring (kept outputs, the three gradients, their dtypes)
    (
        "linear_half",
        lambda B, x, w, b: B.linear_half(x, w, b, DType.F64)[0],
        [u(2, 3, 4), u(4, 5), u(5)],
    ),
    ("linear_half", lambda B, x, w: B.linear_half(x, w, None, DType.F64)[0], [u(3, 4), u(4, 2)]),
    ("conv2d", lambda B, x, w, b: B.conv2d(x, w, b, C2), [u(2, 2, 5, 4), u(3, 2, 3, 2), u(3)]),
    ("conv2d", lambda B, x, w: B.conv2d(x, w, None, C2G), [u(1, 4, 5, 4), u(2, 2, 2, 2)]),
    (
        "conv2d_activation",
        lambda B, x, w, b: B.conv2d_activation(x, w, b, C2, ("silu",)),
        [u(2, 2, 5, 4), u(3, 2, 3, 2), u(3)],
    ),
    (
        "conv2d_activation",
        lambda B, x, w: B.conv2d_activation(x, w, None, C2G, ("hard_swish",)),
        [u(1, 4, 5, 4), u(2, 2, 2, 2)],
    ),
    (
        "conv_transpose2d",
        lambda B, x, w, b: B.conv_transpose2d(x, w, b, CT2),
        [u(2, 2, 3, 3), u(2, 3, 3, 2), u(3)],
    ),
    ("conv1d", lambda B, x, w, b: B.conv1d(x, w, b, C1), [u(2, 2, 6), u(3, 2, 3), u(3)]),
    (
        "conv_transpose1d",
        lambda B, x, w, b: B.conv_transpose1d(x, w, b, CT1),
        [u(2, 2, 4), u(2, 3, 3), u(3)],
    ),
    ("avg_pool2d", lambda B, x: B.avg_pool2d(x, (2, 2), (1, 2), (1, 0), False), [u(1, 2, 4, 4)]),
    ("avg_pool1d", lambda B, x: B.avg_pool1d(x, 2, 1, 1, True), [u(1, 2, 5)]),
    (
        "max_pool2d_with_indices",
        lambda B, x: B.max_pool2d_with_indices(x, (2, 2), (2, 1), (0, 1), (1, 1)),
        [distinct(1, 2, 4, 4)],
    ),
    (
        "max_pool2d",
        lambda B, x: B.max_pool2d(x, (2, 2), (1, 1), (0, 0), (1, 1)),
        [distinct(1, 1, 4, 4)],
    ),
    (
        "max_pool1d_with_indices",
        lambda B, x: B.max_pool1d_with_indices(x, 2, 1, 0, 1),
        [distinct(1, 2, 5)],
    ),
    ("max_pool1d", lambda B, x: B.max_pool1d(x, 3, 2, 1, 1), [distinct(1, 2, 7)]),
    ("adaptive_avg_pool2d", lambda B, x: B.adaptive_avg_pool2d(x, (2, 3)), [u(1, 2, 5, 4)]),
    ("adaptive_avg_pool1d", lambda B, x: B.adaptive_avg_pool1d(x, 3), [u(1, 2, 5)]),
    (
        "interpolate",
        lambda B, x: B.interpolate(x, (5, 3), InterpolateOptions("nearest")),
        [u(1, 2, 3, 2)],
    ),
    (
        "interpolate",
        lambda B, x: B.interpolate(x, (5, 3), InterpolateOptions("bilinear")),
        [u(1, 2, 3, 2)],
    ),
    (
        "interpolate",
        lambda B, x: B.interpolate(x, (5, 4), InterpolateOptions("bicubic")),
        [u(1, 1, 3, 3)],
    ),
    (
        "unfold4d",
        lambda B, x: B.unfold4d(x, (2, 2), UnfoldOptions((1, 1), (1, 0), (1, 1))),
        [u(1, 2, 3, 3)],
    ),
    # attention: one node, backward = attention_backward (softmax recomputed); more rows and a
    # numpy float64 reference in test_gradcheck_attention.py
    ("attention", lambda B, q, k, v: B.attention(q, k, v, None, True, 0.6),
     [u(2, 1, 3, 4), u(2, 1, 5, 4), u(2, 1, 5, 3)]),  # fmt: skip
    # the declared flash forward: its node keeps (output, statistic), its backward is
    # attention_lse_backward (on NdArray the defaults: no statistic, attention_backward)
    ("attention_with_lse", lambda B, q, k, v: B.attention_with_lse(q, k, v, None, True, 0.6)[0],
     [u(2, 1, 3, 4), u(2, 1, 5, 4), u(2, 1, 5, 3)]),  # fmt: skip
    ("layer_norm", lambda B, x, g, b: B.layer_norm(x, g, b, 1e-5), [u(3, 5), u(5), u(5)]),
]
