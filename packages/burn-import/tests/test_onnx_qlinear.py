"""QLinearMatMul against its formula in numpy: exact integer products, the multiplier
a_scale * b_scale / y_scale in the scales' type, round half to even, saturation."""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import one_node
from burn_import.onnx import backend
from onnx import TensorProto as T
from onnx import helper as h


def ref(a, sa, za, b, sb, zb, sy, zy):
    c = (a.astype(np.int64) - int(za)) @ (b.astype(np.int64) - int(zb))
    mult = np.float64(sa * sb / sy)  # in the scales' type first
    d = np.rint(c * mult) + int(zy)
    info = np.iinfo(zy.dtype)
    return np.clip(d, info.min, info.max).astype(zy.dtype)


@pytest.mark.parametrize("qtype", [np.uint8, np.int8])
@pytest.mark.parametrize("stype", [np.float32, np.float16])
def test_qlinear_matmul(qtype, stype):
    rng = np.random.default_rng(12)
    info = np.iinfo(qtype)
    a = rng.integers(info.min, info.max + 1, (2, 4, 3)).astype(qtype)
    b = rng.integers(info.min, info.max + 1, (3, 5)).astype(qtype)
    sa, sb, sy = (np.array(v, stype) for v in (0.02, 0.05, 0.05))
    za, zb, zy = (np.array(v, qtype) for v in (3, -2 if qtype is np.int8 else 9, 1))
    q = h.np_dtype_to_tensor_dtype(np.dtype(qtype))
    s = h.np_dtype_to_tensor_dtype(np.dtype(stype))
    m = one_node(
        "QLinearMatMul",
        [
            ("a", q, [2, 4, 3]),
            ("sa", s, []),
            ("za", q, []),
            ("b", q, [3, 5]),
            ("sb", s, []),
            ("zb", q, []),
            ("sy", s, []),
            ("zy", q, []),
        ],
        [("y", q, [2, 4, 5])],
        opset=21,
    )
    (y,) = backend.prepare(m).run([a, sa, za, b, sb, zb, sy, zy])
    want = ref(a, sa, za, b, sb, zb, sy, zy)
    assert y.dtype == want.dtype
    np.testing.assert_array_equal(y, want)
    assert (y == info.max).any() or (y == info.min).any()  # saturation is exercised


def ref_qconv(x, sx, zx, w, sw, zw, sy, zy, bias):
    """Direct integer correlation (stride 1, no padding), bias, per-channel requantization."""
    xc = x.astype(np.int64) - int(zx)
    wc = w.astype(np.int64) - zw.astype(np.int64).reshape(-1, 1, 1, 1)
    n, _, h, wd = x.shape
    co, _, kh, kw = w.shape
    acc = np.zeros((n, co, h - kh + 1, wd - kw + 1), np.int64)
    for i, j in np.ndindex(kh, kw):
        acc += np.einsum(
            "nchw,oc->nohw", xc[:, :, i : i + h - kh + 1, j : j + wd - kw + 1], wc[:, :, i, j]
        )
    acc += bias.reshape(1, -1, 1, 1)
    mult = (sx * sw / sy).astype(np.float64).reshape(1, -1, 1, 1)
    d = np.rint(acc * mult) + int(zy)
    return np.clip(d, 0, 255).astype(np.uint8)


def test_qlinear_conv_per_channel():
    rng = np.random.default_rng(13)
    x = rng.integers(0, 256, (1, 2, 5, 6)).astype(np.uint8)
    w = rng.integers(0, 256, (3, 2, 3, 2)).astype(np.uint8)
    sx, sy = np.array(0.01, np.float32), np.array(0.2, np.float32)
    sw = np.array([0.01, 0.02, 0.005], np.float32)
    zx, zy = np.array(120, np.uint8), np.array(100, np.uint8)
    zw = np.array([128, 127, 130], np.uint8)
    bias = np.array([500, -800, 40], np.int32)
    U8, F32 = T.UINT8, T.FLOAT
    m = one_node(
        "QLinearConv",
        [
            ("x", U8, [1, 2, 5, 6]),
            ("sx", F32, []),
            ("zx", U8, []),
            ("w", U8, [3, 2, 3, 2]),
            ("sw", F32, [3]),
            ("zw", U8, [3]),
            ("sy", F32, []),
            ("zy", U8, []),
            ("b", T.INT32, [3]),
        ],
        [("y", U8, [1, 3, 3, 5])],
        opset=10,
    )
    (y,) = backend.prepare(m).run([x, sx, zx, w, sw, zw, sy, zy, bias])
    np.testing.assert_array_equal(y, ref_qconv(x, sx, zx, w, sw, zw, sy, zy, bias))
