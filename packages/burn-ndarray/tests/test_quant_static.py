"""`NdArray.qdq_conv2d`: the conv of an 8-bit input with a zero point (ONNX's QDQ conv before
requantization) on its integers (`_native/q8conv.c`'s `q8_conv2d_static`).

Checked against numpy: the integer sums sum((x_q - zp) * w) in int64 (exact: scales of 1 give
them back bitwise), the float result against float64 (s_x * s_w[co] * acc + bias) to float32
rounding. The kernel this CPU runs (VNNI, or the 16-bit AVX2 / plain-C core) is the one the
backend built; the other cores are built here too and run on the same cases."""

from __future__ import annotations

import ctypes
import platform
import shutil

import numpy as np
import pytest
from burn_ndarray import NdArray, _native_quant
from burn_tensor import DType, Tensor
from burn_tensor.quantization import QuantScheme, QuantStore, QuantValue

pytestmark = pytest.mark.skipif(_native_quant.lib() is None, reason=_native_quant.status())
F = np.float32


def _acc_ref(xq, zp, w, stride, pads, dil):
    """sum((x_q - zp) * w) in int64, the padding adding 0; pads (top, left, bottom, right)."""
    (sh, sw), (pt, pl, pb, pr), (dh, dw) = stride, pads, dil
    x = np.pad(xq.astype(np.int64) - zp, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    b, c, h, wd = x.shape
    co, _, kh, kw = w.shape
    oh, ow = (h - dh * (kh - 1) - 1) // sh + 1, (wd - dw * (kw - 1) - 1) // sw + 1
    acc = np.zeros((b, co, oh, ow), np.int64)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i * dh : i * dh + sh * (oh - 1) + 1 : sh,
                      j * dw : j * dw + sw * (ow - 1) + 1 : sw]  # fmt: skip
            acc += np.einsum("oc,bchw->bohw", w[:, :, i, j].astype(np.int64), patch)
    return acc


def _weight(q, d, scale=1.0):
    scheme = QuantScheme(value=QuantValue.Q8F, store=QuantStore.NATIVE)
    vals = Tensor.from_data(q.astype(np.int32), d, DType.I32)
    return Tensor.from_quantized_values(vals, Tensor.from_data(np.array([scale], F), d), scheme)


def _run(backend, xq, sx, zp, wt, wsc, bias, stride, pads, dil):
    return backend.qdq_conv2d(xq, np.array([sx], F), np.array([zp], xq.dtype), wt.into_primitive(),
                              np.asarray(wsc, F), bias, stride, pads, dil, 1)  # fmt: skip


def _case(rng, dtype, zp, b=2, c=5, h=11, w=19, co=7, k=(3, 3)):
    lo, hi = (0, 256) if dtype == np.uint8 else (-128, 128)
    xq = rng.integers(lo, hi, size=(b, c, h, w)).astype(dtype)
    xq[0, 0, 0, :5] = lo  # x_q at both ends of the type
    xq[-1, -1, -1, -5:] = hi - 1
    xq[min(1, b - 1), 1] = zp  # a channel of zeros (x_q == zp, common after ReLU)
    q = rng.integers(-128, 128, size=(co, c) + k).astype(np.int8)
    q[0] = -128  # the weight whose magnitude int8 cannot hold
    q[1] = 127
    return xq, q


@pytest.mark.parametrize(
    "dtype,zp,stride,pads,dil",
    [
        (np.uint8, 0, (1, 1), (1, 1, 1, 1), (1, 1)),
        (np.uint8, 128, (2, 2), (1, 1, 1, 1), (1, 1)),
        (np.uint8, 255, (2, 1), (0, 2, 1, 0), (1, 2)),  # asymmetric pads, dilation
        (np.int8, -128, (1, 2), (2, 0, 0, 1), (2, 1)),
        (np.int8, 5, (1, 1), (0, 0, 0, 0), (1, 1)),
        (np.uint8, 7, (2, 2), (3, 3, 3, 3), (1, 1)),  # 7x7 on 71-wide rows: runs of 16
        (np.uint8, 9, (2, 2), (0, 0, 0, 0), (1, 1)),
        (np.uint8, 11, (1, 1), (1, 1, 1, 1), (1, 1)),  # 16 rows of 16: im2col rows end at npad
    ],
)
def test_integer_sums_are_exact(dtype, zp, stride, pads, dil):
    """Scales of 1 and no bias: the output is the int32 sum itself (|acc| < 2^24)."""
    be = NdArray(num_threads=2)
    d = be.device()
    rng = np.random.default_rng(zp & 0xFF)
    shape = {7: dict(c=3, h=13, w=71, k=(7, 7)), 9: dict(c=3, h=13, w=71, k=(7, 7)),
             11: dict(c=4, h=20, w=16)}.get(zp, {})  # fmt: skip
    xq, q = _case(rng, dtype, zp, **shape)
    got = _run(be, xq, 1.0, zp, _weight(q, d), [1.0], None, stride, pads, dil)
    want = _acc_ref(xq, zp, q, stride, pads, dil)
    assert np.abs(want).max() < 1 << 24
    np.testing.assert_array_equal(got, want.astype(F))


def test_scales_per_channel_bias_and_threads():
    """s_x * s_w[co] * acc + bias against float64, per-tensor and per-channel scales (the
    stored weight scale times the channel's), 1x1 stride-2 and 3x3 convs; 1, 2 and 4 threads
    give the same bits."""
    rng = np.random.default_rng(7)
    d = NdArray().device()
    for k, stride, pads in (((3, 3), (1, 1), (1, 1, 1, 1)), ((1, 1), (2, 2), (0, 0, 0, 0))):
        xq, q = _case(rng, np.uint8, 128, b=3, c=9, h=17, w=23, co=21, k=k)
        sx, ws = 0.0231, 0.5
        for wsc in (np.array([0.0173], F), rng.uniform(0.001, 0.05, size=21).astype(F)):
            bias = rng.normal(size=21).astype(F)
            w = _weight(q, d, ws)
            outs = [_run(NdArray(num_threads=t), xq, sx, 128, w, wsc, bias, stride, pads, (1, 1))
                    for t in (1, 2, 4)]  # fmt: skip
            for o in outs[1:]:
                np.testing.assert_array_equal(o, outs[0])
            acc = _acc_ref(xq, 128, q, stride, pads, (1, 1)).astype(np.float64)
            ch = np.float64(F(sx)) * wsc.astype(np.float64) * ws
            want = acc * ch.reshape(1, -1, 1, 1) + bias.reshape(1, -1, 1, 1)
            np.testing.assert_allclose(outs[0], want, rtol=2e-6, atol=2e-6 * np.abs(want).max())


def test_channel_groups_of_a_one_block_image():
    """Batch 1, a 7x7 image (one block of output rows): with 2 and 4 threads the output
    channels are split into groups (`q8conv.c`); every split gives the exact sums."""
    rng = np.random.default_rng(5)
    xq, q = _case(rng, np.uint8, 77, b=1, c=16, h=7, w=7, co=131)
    want = _acc_ref(xq, 77, q, (1, 1), (1,) * 4, (1, 1)).astype(F)
    lib = _native_quant.lib()  # called directly: the backend would pick fewer threads under load
    rows = np.zeros((131, 144), np.int8)
    rows[:, :144] = q.reshape(131, 144)
    r16, chs = rows.astype(np.int16), np.ones(131, F)
    for t in (1, 2, 4):
        got = np.full(want.shape, np.nan, F)  # not np.empty: it may reuse the last result
        assert lib.q8_conv2d_static(xq.ctypes.data, 0, 77, 1, 16, 7, 7, rows.ctypes.data, r16.ctypes.data,
                                    None, 144, 131, 3, 3, chs.ctypes.data, None, got.ctypes.data, 0.0, 0, 0,
                                    7, 7, 1, 1, 1, 1, 1, 1, t) == 0  # fmt: skip
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("ydt,yzp", [(np.uint8, 3), (np.int8, -7)])
def test_quantized_output_is_the_float_output_quantized(ydt, yzp):
    """With an output scale and zero point, the bytes ONNX's QuantizeLinear gives for the float
    output: float32 y / s, round half to even, + zp, saturated (both ends reached here)."""
    be = NdArray(num_threads=2)
    d = be.device()
    rng = np.random.default_rng(11)
    xq, q = _case(rng, np.uint8, 100, b=2, c=6, h=9, w=13, co=10)
    w, bias = _weight(q, d, 0.01), rng.normal(size=10).astype(F)
    args = (xq, np.array([0.02], F), np.array([100], np.uint8), w.into_primitive(), None, bias,
            (1, 1), (1, 1, 1, 1), (1, 1), 1)  # fmt: skip
    y = be.qdq_conv2d(*args)
    sy = F(min(y.max(), -y.min()) / 300)  # y / s_y reaches past both ends of the type
    got = be.qdq_conv2d(*args, out_scale=np.array([sy], F), out_zero_point=np.array([yzp], ydt))
    info = np.iinfo(ydt)
    want = np.clip(np.rint(y / sy) + F(yzp), info.min, info.max).astype(ydt)
    assert got.dtype == ydt
    np.testing.assert_array_equal(got, want)
    assert (got == info.min).any() and (got == info.max).any()


def test_quantized_output_rounds_ties_to_even():
    """Unit scales and s_y = 2: y / s_y = acc / 2, a tie for every odd sum; ONNX rounds them to
    even (the 16-lane and the scalar epilogue alike: 13 columns leave partial panels)."""
    be = NdArray()
    rng = np.random.default_rng(12)
    xq, q = _case(rng, np.uint8, 0, b=1, c=2, h=9, w=13, co=4)
    xq //= 16  # small sums: the ties stay inside the type's range
    q //= 16
    w = _weight(q, be.device())
    args = (xq, np.array([1.0], F), np.array([0], np.uint8), w.into_primitive(), None, None,
            (1, 1), (1, 1, 1, 1), (1, 1), 1)  # fmt: skip
    acc = _acc_ref(xq, 0, q, (1, 1), (1,) * 4, (1, 1))
    got = be.qdq_conv2d(*args, out_scale=np.array([2.0], F), out_zero_point=np.array([3], np.int8))
    want = np.clip(np.rint(acc / 2) + 3, -128, 127).astype(np.int8)
    assert ((acc % 2 == 1) & (np.abs(acc) < 240)).sum() > 20  # ties inside the range
    np.testing.assert_array_equal(got, want)


def test_not_covered_returns_none():
    """Grouped convs and zero points outside x's type are left to the caller (dequantize)."""
    be = NdArray()
    d = be.device()
    xq = np.zeros((1, 4, 5, 5), np.uint8)
    w = _weight(np.ones((4, 2, 3, 3), np.int8), d)
    assert be.qdq_conv2d(xq, np.array([1.0], F), np.array([3], np.uint8), w.into_primitive(),
                         np.ones(1, F), None, (1, 1), (0,) * 4, (1, 1), 2) is None  # fmt: skip
    w4 = _weight(np.ones((4, 4, 3, 3), np.int8), d)
    assert be.qdq_conv2d(xq, np.array([1.0], F), np.array([300]), w4.into_primitive(),
                         np.ones(1, F), None, (1, 1), (0,) * 4, (1, 1), 1) is None  # fmt: skip


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
@pytest.mark.parametrize("flags", [["-mavx2"], []], ids=["avx2", "plain-c"])
def test_other_isa_cores_are_exact(flags):
    """The 16-bit cores this CPU may not pick (AVX2 `vpmaddwd`, plain C), built from the same
    source: exact sums for uint8 x at 0 and 255, zero points 0 / 255, weights -128 and 127."""
    if flags and platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("AVX2 is x86-64 only")
    lib = ctypes.CDLL(str(_native_quant.build_variant(flags)))  # shared with test_quant_dynamic
    p, L, i = ctypes.c_void_p, ctypes.c_long, ctypes.c_int
    lib.q8_static_w16.restype = i
    assert lib.q8_static_w16() == 1
    lib.q8_conv2d_static.restype = i
    lib.q8_conv2d_static.argtypes = (p, i, i, L, L, L, L, p, p, p, L, L, L, L, p, p, p, ctypes.c_float, i, i, L, L) + (L,) * 6 + (i,)
    rng = np.random.default_rng(3)
    for zp, stride in ((0, 1), (255, 2)):
        xq, q = _case(rng, np.uint8, zp, b=2, c=3, h=30, w=20, co=5)  # 3 tasks of 12 rows
        kk, kp = 27, 28
        rows = np.zeros((5, kp), np.int8)
        rows[:, :kk] = q.reshape(5, kk)
        r16 = rows.astype(np.int16)
        want = _acc_ref(xq, zp, q, (stride,) * 2, (1,) * 4, (1, 1))
        chs = np.ones(5, F)
        got = [np.full(want.shape, np.nan, F) for _ in range(2)]
        for y, t in zip(got, (1, 2)):
            assert lib.q8_conv2d_static(xq.ctypes.data, 0, zp, 2, 3, 30, 20, rows.ctypes.data, r16.ctypes.data,
                                        None, kp, 5, 3, 3, chs.ctypes.data, None, y.ctypes.data, 0.0, 0, 0, *want.shape[2:],
                                        stride, stride, 1, 1, 1, 1, t) == 0  # fmt: skip
        np.testing.assert_array_equal(got[0], want.astype(F))
        np.testing.assert_array_equal(got[1], got[0])
