"""Tests written for mutants of ONNX Conv/pool padding that the suite let survive
(tools/mutation). ONNX's backend cases feed a Conv's weights as graph inputs, so its layer path
(constant weights: a burn_nn `Conv2d` with `PaddingConfig2d.Explicit`) was not run with
`auto_pad`; here every padding form goes through it, against ONNX's reference implementation.
"""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import one_node, reference
from burn_import.onnx import backend
from onnx import TensorProto as T
from onnx import numpy_helper as nh

RNG = np.random.default_rng(3)
X = RNG.standard_normal((1, 2, 6, 7)).astype(np.float32)
W = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
B = RNG.standard_normal(3).astype(np.float32)


@pytest.mark.parametrize(
    "attrs",
    [
        {"auto_pad": "VALID", "strides": [2, 2]},
        {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
        {"auto_pad": "SAME_LOWER", "strides": [2, 2]},
        {"pads": [1, 0, 0, 2]},  # h_begin, w_begin, h_end, w_end: asymmetric on both axes
    ],
    ids=["valid", "same_upper", "same_lower", "explicit"],
)
def test_conv_with_constant_weights_pads_like_the_reference(attrs):
    m = one_node(
        "Conv",
        [("x", T.FLOAT, list(X.shape))],
        [("y", T.FLOAT, [None] * 4)],
        opset=17,
        inits=[nh.from_array(W, "w"), nh.from_array(B, "b")],
        kernel_shape=[3, 3],
        **attrs,
    )
    (want,) = reference(m, {"x": X})
    (got,) = backend.prepare(m).run([X])
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def max_pool_ref(x, kernel, strides, auto_pad):
    """ONNX MaxPool with `auto_pad`, in numpy: SAME gives ceil(in / stride) outputs, the odd
    pixel of padding going to the end (UPPER) or to the beginning (LOWER)."""
    pads = []
    for d, k, s in zip(x.shape[2:], kernel, strides):
        if auto_pad == "VALID":
            pads.append((0, 0))
            continue
        out = -(-d // s)
        total = max((out - 1) * s + k - d, 0)
        small, big = total // 2, total - total // 2
        pads.append((small, big) if auto_pad == "SAME_UPPER" else (big, small))
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0), *pads], constant_values=-np.inf)
    oh = (xp.shape[2] - kernel[0]) // strides[0] + 1
    ow = (xp.shape[3] - kernel[1]) // strides[1] + 1
    y = np.empty(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            r, c = i * strides[0], j * strides[1]
            y[:, :, i, j] = xp[:, :, r : r + kernel[0], c : c + kernel[1]].max((2, 3))
    return y


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER", "VALID"])
@pytest.mark.parametrize(
    "kernel,strides",
    [((2, 3), (2, 2)), ((1, 2), (3, 4))],  # the second: windows smaller than the stride, SAME
    ids=["overlap", "gaps"],  # needs no padding at all (a negative total is 0, not a crop)
)
def test_max_pool_auto_pad_against_numpy(auto_pad, kernel, strides):
    # (ONNX's reference implementation gives 3 columns, not ceil(7 / 2) = 4, for SAME_LOWER
    # here; the spec and its shape inference say 4, so the reference is written in the test)
    m = one_node(
        "MaxPool",
        [("x", T.FLOAT, list(X.shape))],
        [("y", T.FLOAT, [None] * 4)],
        opset=17,
        kernel_shape=list(kernel),
        strides=list(strides),
        auto_pad=auto_pad,
    )
    (got,) = backend.prepare(m).run([X])
    want = max_pool_ref(X, kernel, strides, auto_pad)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want.astype(np.float32))


def test_negative_conv_pads_are_refused():
    # ONNX pads are >= 0 (cropping is Slice's job); a negative one is a malformed model
    from burn_import.onnx import OnnxImportError

    m = one_node(
        "Conv",
        [("x", T.FLOAT, list(X.shape))],
        [("y", T.FLOAT, [None] * 4)],
        opset=17,
        inits=[nh.from_array(W, "w"), nh.from_array(B, "b")],
        kernel_shape=[3, 3],
        pads=[-1, 0, 0, 0],
    )
    with pytest.raises(OnnxImportError, match="pads"):
        backend.prepare(m).run([X])
