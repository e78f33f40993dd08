"""`ops.quantize` / `ops.dequantize` (ONNX QuantizeLinear / DequantizeLinear at run time) against
the spec's formulas in numpy float64: the float32 fast paths must give the same bits."""

from __future__ import annotations

import numpy as np
import pytest
from burn_import.onnx import ops
from burn_ndarray import NdArray
from burn_tensor import DType, Tensor

DEV = NdArray().device()


def _t(a, dtype):
    return Tensor.from_data(np.asarray(a), DEV, dtype)


def _np(t):
    return np.asarray(t.to_data().numpy())


@pytest.mark.parametrize(
    "qdt, npdt, zp", [(DType.U8, np.uint8, 131), (DType.I8, np.int8, -7), (DType.I16, np.int16, 300)]
)
def test_dequantize_is_the_float64_formula_rounded_once(qdt, npdt, zp):
    info = np.iinfo(npdt)
    q = np.random.default_rng(0).integers(info.min, info.max + 1, (4, 3, 5, 5)).astype(npdt)
    scale = np.float32(0.0123456789)
    got = ops.dequantize(_t(q, qdt), _t([scale], DType.F32), _t([zp], qdt), 1, 0, 4, DType.F32)
    want = ((q.astype(np.float64) - zp) * np.float64(scale)).astype(np.float32)
    assert _np(got).dtype == np.float32
    np.testing.assert_array_equal(_np(got), want)


def test_dequantize_per_channel_zero_points_and_scales():
    q = np.random.default_rng(1).integers(0, 256, (2, 3, 4)).astype(np.uint8)
    s = np.array([0.5, 0.037, 3.25], np.float32)
    z = np.array([0, 128, 255], np.uint8)
    got = ops.dequantize(_t(q, DType.U8), _t(s, DType.F32), _t(z, DType.U8), 1, 0, 3, DType.F32)
    want = (q.astype(np.float64) - z[:, None]) * s[:, None].astype(np.float64)
    np.testing.assert_array_equal(_np(got), want.astype(np.float32))


@pytest.mark.parametrize("qdt, npdt, zp", [(DType.U8, np.uint8, 128), (DType.I8, np.int8, 3)])
def test_quantize_rounds_half_to_even_and_saturates(qdt, npdt, zp):
    scale = np.float32(0.5)
    # ties (x / s = k + 0.5), far beyond the range (|x / s| >= 2^24, where a float32 sum with
    # the zero point would round), and ordinary values
    x = np.array([0.25, 0.75, -0.25, -1.25, 2.0**30, -(2.0**30), 1e38, -1e38, 3.3, -60.1],
                 np.float32)  # fmt: skip
    info = np.iinfo(npdt)
    got = ops.quantize(_t(x, DType.F32), _t([scale], DType.F32), _t([zp], qdt), 0, 0, 1, qdt,
                       None, (int(info.min), int(info.max)))  # fmt: skip
    y = np.rint(x / scale).astype(np.float64) + zp  # the division in float32, as ONNX does
    want = np.clip(y, info.min, info.max).astype(npdt)
    np.testing.assert_array_equal(_np(got), want)
