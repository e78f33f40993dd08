"""QLinearMatMul against its formula in numpy: exact integer products, the multiplier
a_scale * b_scale / y_scale in the scales' type, round half to even, saturation."""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import one_node
from burn_import.onnx import backend
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
