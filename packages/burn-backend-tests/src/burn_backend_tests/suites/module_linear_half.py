"""Conformance: autocast's linear, `linear_half` (through `module.linear` inside
`burn_tensor.autocast`, the user path, and the backend op and its backward on primitives),
against float64 numpy of the half-rounded operands: x and weight cast to float16 / bfloat16,
their product accumulated in float32 and handed back in the inputs' dtype, + bias in that
dtype; the op's second and third outputs are exactly the half copies; the gradients of x and
weight are the products of the half output gradient, each in its input's dtype, the bias
gradient the output gradient's sums. Ranks 1-4, with and without bias, transposed operands,
a gradient not asked for, and a mismatched call under autocast.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import DType, Float, TensorCheckError, autocast, module

from .._ctx import sample
from .._prim import wrap

HALVES = {"bf16": DType.BF16, "f16": DType.F16}
#: relative error of the product against float64 of the rounded operands, as a fraction of
#: sum |x| |w|: float32 accumulation plus a backend's rounding of the product to the half type
#: before it is widened (the default's; Cuda writes float32 straight from its accumulator)
REL = {DType.BF16: 2.0**-7, DType.F16: 2.0**-10}

# (id, x shape, d_out, bias)
CASES = [
    ("rank2", (5, 7), 3, True),
    ("rank2_no_bias", (4, 6), 5, False),
    ("rank3", (2, 3, 16), 8, True),
    ("rank4", (2, 1, 3, 5), 2, True),
    ("rank1", (4,), 3, True),
    ("tall", (65, 32), 24, True),
]


def _rounded(a, h: DType) -> np.ndarray:
    return np.asarray(a).astype(h.np).astype(np.float64)


def _close(t, expected, scale, rel, what):
    got = t.numpy().astype(np.float64)
    assert got.shape == expected.shape, f"{what}: shape {got.shape}, expected {expected.shape}"
    err = np.abs(got - expected)
    bound = rel * scale + 1e-6
    assert np.all(err <= bound), f"{what}: max error {err.max()} over a bound of {bound.min()}"


def _inputs(burn, cid, layout):
    shape, d_out, has_bias = next(c[1:] for c in CASES if c[0] == cid)
    x_t, x = burn.view_input(sample(shape, "unit", 11), Float, layout)
    w_t, w = burn.view_input(sample((shape[-1], d_out), "unit", 12), Float, layout)
    b_t, b = burn.view_input(sample((d_out,), "unit", 13), Float)
    return (x_t, w_t, b_t if has_bias else None), (x, w, b if has_bias else None)


@pytest.mark.parametrize("half", list(HALVES))
@pytest.mark.parametrize("layout", ["contiguous", "permuted"])
@pytest.mark.parametrize("cid", [c[0] for c in CASES])
def test_linear_under_autocast(burn, cid, layout, half):
    h = HALVES[half]
    (x_t, w_t, b_t), (x, w, b) = _inputs(burn, cid, layout)
    with autocast(half):
        y = module.linear(x_t, w_t, b_t)
    hx, hw = _rounded(x, h), _rounded(w, h)
    expected = hx @ hw + (0.0 if b is None else b)
    assert y.dtype is burn.fdt  # handed back in the inputs' dtype
    scale = np.abs(hx) @ np.abs(hw) + (0.0 if b is None else np.abs(b))
    _close(y, expected, scale, max(REL[h], burn.loose.relative), "linear under autocast")
    # the inputs are not written
    burn.assert_equal(x_t, x)
    burn.assert_equal(w_t, w)


@pytest.mark.parametrize("half", list(HALVES))
@pytest.mark.parametrize("cid", ["rank2", "rank3", "rank2_no_bias"])
def test_linear_half_op_and_backward(burn, cid, half):
    h = HALVES[half]
    (x_t, w_t, b_t), (x, w, b) = _inputs(burn, cid, "contiguous")
    bp = None if b_t is None else b_t.into_primitive()
    out, xh, wh = burn.backend.linear_half(x_t.into_primitive(), w_t.into_primitive(), bp, h)
    # the half copies are the operands rounded once
    hx, hw = _rounded(x, h), _rounded(w, h)
    for p, ref in ((xh, hx), (wh, hw)):
        t = wrap(burn, p)
        assert t.dtype is h
        np.testing.assert_array_equal(t.numpy().astype(np.float64), ref)
    assert wrap(burn, out).dtype is burn.fdt
    g = sample(tuple(x.shape[:-1]) + (w.shape[1],), "unit", 14)
    g_t, g = burn.view_input(g, Float)
    dts = (burn.fdt, burn.fdt, None if b is None else burn.fdt)
    gx, gw, gb = burn.backend.linear_half_backward(xh, wh, g_t.into_primitive(), dts)
    hg = _rounded(g, h)
    rel = max(REL[h], burn.loose.relative)
    gx_ref = hg @ hw.T
    _close(wrap(burn, gx), gx_ref, np.abs(hg) @ np.abs(hw.T), rel, "dx")
    g2, x2 = hg.reshape(-1, hg.shape[-1]), hx.reshape(-1, hx.shape[-1])
    _close(wrap(burn, gw), x2.T @ g2, np.abs(x2.T) @ np.abs(g2), rel, "dweight")
    assert wrap(burn, gx).dtype is burn.fdt and wrap(burn, gw).dtype is burn.fdt
    if b is None:
        assert gb is None
    else:
        gsum = g.reshape(-1, g.shape[-1])
        # the sums of the output gradient (a backend may sum its half copy, as torch's autocast)
        _close(wrap(burn, gb), gsum.sum(0), np.abs(gsum).sum(0), rel, "dbias")
    # a gradient not asked for is None
    none_x = burn.backend.linear_half_backward(xh, wh, g_t.into_primitive(), (None,) + dts[1:])
    assert none_x[0] is None and none_x[1] is not None


def test_mismatched_linear_under_autocast_names_the_op(burn):
    x_t = burn.float(sample((3, 4), "unit", 1))
    w_t = burn.float(sample((5, 2), "unit", 2))
    with autocast("bf16"), pytest.raises(TensorCheckError, match="linear"):
        module.linear(x_t, w_t)
