"""ONNX Conv and ConvTranspose with 3 spatial dims against direct float64 loops over the definitions."""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import one_node
from burn_import.onnx import backend
from onnx import TensorProto as T


def ref_conv3d(x, w, b, strides, pads, dil, group):
    x, w = x.astype(np.float64), w.astype(np.float64)
    n = x.shape[0]
    co, cg = w.shape[:2]
    k = w.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + 3]) for i in range(3)])
    out_sz = [(xp.shape[2 + i] - dil[i] * (k[i] - 1) - 1) // strides[i] + 1 for i in range(3)]
    y = np.zeros((n, co, *out_sz))
    per = co // group
    for o in range(co):
        g = o // per
        for od, oh, ow in np.ndindex(*out_sz):
            acc = 0.0
            for ci, a, bb, cc in np.ndindex(cg, *k):
                acc += (
                    w[o, ci, a, bb, cc]
                    * xp[
                        :,
                        g * cg + ci,
                        od * strides[0] + a * dil[0],
                        oh * strides[1] + bb * dil[1],
                        ow * strides[2] + cc * dil[2],
                    ]
                )
            y[:, o, od, oh, ow] = acc + (0.0 if b is None else b[o])
    return y


@pytest.mark.parametrize(
    ("strides", "pads", "dil", "group", "bias"),
    [
        ([1, 1, 1], [0, 0, 0, 0, 0, 0], [1, 1, 1], 1, True),
        ([2, 1, 2], [1, 0, 2, 0, 1, 1], [1, 2, 1], 1, False),  # asymmetric pads, dilation
        ([1, 2, 1], [1, 1, 1, 1, 1, 1], [2, 1, 1], 2, True),  # groups, depth dilation
    ],
)
def test_conv3d(strides, pads, dil, group, bias):
    rng = np.random.default_rng(10)
    x = rng.standard_normal((2, 4, 6, 5, 7)).astype(np.float32)
    w = rng.standard_normal((6, 4 // group, 3, 2, 3)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32) if bias else None
    want = ref_conv3d(x, w, b, strides, pads, dil, group)
    ins = [("x", T.FLOAT, list(x.shape)), ("w", T.FLOAT, list(w.shape))]
    if bias:
        ins.append(("b", T.FLOAT, [6]))
    m = one_node(
        "Conv",
        ins,
        [("y", T.FLOAT, list(want.shape))],
        opset=17,
        strides=strides,
        pads=pads,
        dilations=dil,
        group=group,
    )
    (y,) = backend.prepare(m).run([x, w] + ([b] if bias else []))
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)


def ref_conv_transpose3d(x, w, b, strides, pads, dil, group, out_pad):
    """Scatter every input voxel times its kernel, then crop the pads (float64)."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c = x.shape[:2]
    cg_out, k = w.shape[1], w.shape[2:]
    size = [
        (x.shape[2 + i] - 1) * strides[i] + dil[i] * (k[i] - 1) + 1 + out_pad[i] for i in range(3)
    ]
    full = np.zeros((n, cg_out * group, *size))
    cg_in = c // group
    for ci in range(c):
        g = ci // cg_in
        for i, j, l in np.ndindex(*x.shape[2:]):
            for a, bb, cc in np.ndindex(*k):
                pos = (
                    i * strides[0] + a * dil[0],
                    j * strides[1] + bb * dil[1],
                    l * strides[2] + cc * dil[2],
                )
                full[:, g * cg_out : (g + 1) * cg_out, pos[0], pos[1], pos[2]] += (
                    x[:, ci, i, j, l, None] * w[ci, :, a, bb, cc]
                )
    sl = tuple(slice(pads[i], size[i] - pads[i + 3]) for i in range(3))
    y = full[(slice(None), slice(None)) + sl]
    return y if b is None else y + b.reshape(1, -1, 1, 1, 1)


@pytest.mark.parametrize(
    ("strides", "pads", "dil", "group", "out_pad"),
    [
        ([1, 1, 1], [0, 0, 0, 0, 0, 0], [1, 1, 1], 1, [0, 0, 0]),
        ([2, 1, 2], [1, 0, 0, 0, 1, 1], [1, 2, 1], 2, [1, 0, 1]),
    ],
)
def test_conv_transpose3d(strides, pads, dil, group, out_pad):
    rng = np.random.default_rng(18)
    x = rng.standard_normal((2, 4, 3, 4, 3)).astype(np.float32)
    w = rng.standard_normal((4, 3, 2, 3, 2)).astype(np.float32)
    b = rng.standard_normal(3 * group).astype(np.float32)
    want = ref_conv_transpose3d(x, w, b, strides, pads, dil, group, out_pad)
    m = one_node(
        "ConvTranspose",
        [("x", T.FLOAT, list(x.shape)), ("w", T.FLOAT, list(w.shape)), ("b", T.FLOAT, [3 * group])],
        [("y", T.FLOAT, list(want.shape))],
        opset=17,
        strides=strides,
        pads=pads,
        dilations=dil,
        group=group,
        output_padding=out_pad,
    )
    (y,) = backend.prepare(m).run([x, w, b])
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
