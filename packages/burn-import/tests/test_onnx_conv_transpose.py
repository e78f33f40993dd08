"""ConvTranspose with `output_shape` (auto_pad NOTSET) against a float64 scatter loop.

The full transposed convolution scatters x[i, j] * w into rows i * stride + a * dilation; the
given pads crop the start (and end), and output_shape then crops or zero-extends the end, as
ONNX's reference implementation does.
"""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import one_node
from burn_import.onnx import backend
from onnx import TensorProto as T


def ref(x, w, strides, pads, out_shape):
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, _, h, wd = x.shape
    co, kh, kw = w.shape[1], w.shape[2], w.shape[3]
    full = np.zeros((n, co, (h - 1) * strides[0] + kh, (wd - 1) * strides[1] + kw))
    for i, j, a, b in np.ndindex(h, wd, kh, kw):
        full[:, :, i * strides[0] + a, j * strides[1] + b] += np.einsum(
            "nc,cm->nm", x[:, :, i, j], w[:, :, a, b]
        )
    full = full[:, :, pads[0] :, pads[1] :]
    out = np.zeros((n, co, *out_shape))
    rows, cols = min(out_shape[0], full.shape[2]), min(out_shape[1], full.shape[3])
    out[:, :, :rows, :cols] = full[:, :, :rows, :cols]
    return out


@pytest.mark.parametrize(
    ("pads", "out_shape"),
    [
        ([0, 0, 0, 0], [10, 8]),  # natural 9 x 7: zero-extended at the end
        ([0, 0, 0, 0], [8, 6]),  # cropped at the end
        ([1, 0, 1, 0], [9, 7]),  # pads crop the start, output_shape sets the size
    ],
)
def test_output_shape_crops_or_extends_the_end(pads, out_shape):
    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, 2, 3, 3)).astype(np.float32)
    w = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    m = one_node(
        "ConvTranspose",
        [("x", T.FLOAT, [1, 2, 3, 3]), ("w", T.FLOAT, [2, 3, 3, 3])],
        [("y", T.FLOAT, [1, 3, *out_shape])],
        opset=17,
        strides=[3, 2],
        pads=pads,
        output_shape=out_shape,
    )
    (y,) = backend.prepare(m).run([x, w])
    np.testing.assert_allclose(y, ref(x, w, [3, 2], pads, out_shape), rtol=1e-5, atol=1e-5)
