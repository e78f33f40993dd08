"""Conformance: quantized tensors (quantize, quantize_dynamic, dequantize, packing, fallbacks,
quantized linear/conv/embedding/matmul) against `burn_tensor.quantization`'s numpy reference.

The reference does "the same arithmetic": x / scale in the backend's float dtype (IEEE division
is correctly rounded everywhere), then round half away from zero and clamp in float64. Stored
integers and packed words are compared exactly; dequantized floats within the dtype's tolerance.
Half-precision configs compare the stored codes within one step (a backend may upcast halves).
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import DType, Int, Tensor, TensorCheckError, module
from burn_tensor.quantization import (
    QuantizationParameters,
    QuantLevel,
    QuantPropagation,
    QuantScheme,
    QuantStore,
    QuantValue,
    dequantize_ref,
    pack_ref,
    quantize_ref,
    scales_ref,
    unpack_ref,
)

from .._ctx import sample

SCHEMES = [
    pytest.param(QuantScheme(value=v, level=lvl), id=f"{v.value}-{'t' if lvl.block_size is None else 'b' + str(lvl.block_size)}")
    for v in QuantValue
    for lvl in (QuantLevel.TENSOR, QuantLevel.block(8))
] + [pytest.param(QuantScheme(store=QuantStore.NATIVE), id="q8s-native")]

# (shape, layout): a last dim that is not a multiple of the words (24 / 16 values per word), views
SHAPES = [((3, 40), "contiguous"), ((2, 3, 24), "permuted"), ((40,), "flipped"), ((5, 16), "strided")]


def _np_fdt(burn):
    return burn.backend.float_dtype.np


def _exact(burn) -> bool:
    return burn.backend.float_dtype in (DType.F32, DType.F64)


def _check_codes(burn, got, want):
    if _exact(burn):
        np.testing.assert_array_equal(got, want)
    else:  # half: x / scale may be computed in float32 by the backend
        assert np.abs(got.astype(np.int64) - want).max() <= 1


@pytest.mark.parametrize("shape,layout", SHAPES)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_quantize_dynamic_matches_reference(burn, scheme, shape, layout):
    x, xr = burn.view_input(sample(shape, "any", len(shape)), layout=layout)
    q = x.quantize_dynamic(scheme)
    assert q.is_quantized() and q.dtype.scheme == scheme and q.dims() == list(shape)
    qd = q.quantized_data()
    fdt = _np_fdt(burn)
    want_scales = scales_ref(xr, scheme, fdt).astype(np.float32)
    if _exact(burn):
        np.testing.assert_array_equal(qd.scales, want_scales)
    else:
        np.testing.assert_allclose(qd.scales, want_scales, rtol=2e-3)
    codes = unpack_ref(qd.values, scheme, shape)
    _check_codes(burn, codes, quantize_ref(xr, scheme, qd.scales, fdt))
    # packed words hold exactly those codes in Burn's order (first value in the lowest bits)
    np.testing.assert_array_equal(qd.values, pack_ref(codes, scheme))
    burn.assert_close(q.dequantize(), dequantize_ref(qd.values, qd.scales, scheme, shape))


@pytest.mark.parametrize("scheme", SCHEMES)
def test_quantize_with_given_scales_clamps_and_rounds_half_away(burn, scheme):
    a, b = scheme.value.range()
    shape = (2, 8)
    if scheme.level.is_block():
        scales = np.array([[0.5], [0.25]], np.float32)
    else:
        scales = np.array([0.5], np.float32)
    full = np.repeat(scales, 8, -1) if scheme.level.is_block() else np.full(shape, 0.5, np.float32)
    # ties at +-0.5 and +-1.5 steps, values past both ends of the range, zeros
    steps = np.array([0.5, -0.5, 1.5, -1.5, 0.0, 2 * b + 3.0, 2 * a - 3.0, 0.49], np.float64)
    x = np.tile(steps, (2, 1)) * full
    q = burn.float(x).quantize(scheme, QuantizationParameters(burn.float(scales)))
    qd = q.quantized_data()
    codes = unpack_ref(qd.values, scheme, shape)
    want = np.clip(np.sign(steps) * np.floor(np.abs(steps) + 0.5), a, b).astype(np.int64)
    np.testing.assert_array_equal(codes, np.tile(want, (2, 1)))


def test_zeros_quantize_to_zero(burn):
    q = burn.float(np.zeros((2, 8))).quantize_dynamic(QuantScheme(level=QuantLevel.block(4)))
    burn.assert_close(q.dequantize(), np.zeros((2, 8)))


@pytest.mark.parametrize("propagation", list(QuantPropagation))
def test_ops_without_quantized_kernel_dequantize(burn, propagation):
    scheme = QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(4), propagation=propagation)
    x = burn.float(sample((3, 8), "any", 3))
    y = sample((3, 8), "any", 4)
    q = x.quantize_dynamic(scheme)
    qd = q.quantized_data()
    deq = dequantize_ref(qd.values, qd.scales, scheme, (3, 8))
    out = q + burn.float(y)
    if propagation is QuantPropagation.PROPAGATE:  # requantized with the input's scheme
        assert out.is_quantized() and out.dtype.scheme == scheme
        od = out.quantized_data()
        ref = deq + y
        _check_codes(burn, unpack_ref(od.values, scheme, (3, 8)), quantize_ref(ref, scheme, od.scales, _np_fdt(burn)))
    else:
        assert not out.is_quantized()
        burn.assert_close(out, deq + y)
    # a float lhs with a quantized rhs dequantizes the rhs; the result is float
    r = burn.float(y) * q
    assert not r.is_quantized()
    burn.assert_close(r, y * deq)
    burn.assert_close(q.dequantize().sum_dim(1), deq.sum(1, keepdims=True))


@pytest.mark.parametrize("scheme", SCHEMES[:4] + SCHEMES[-1:])
def test_quantized_matmul_and_linear(burn, scheme):
    x = sample((4, 16), "any", 5)
    w = burn.float(sample((16, 8), "any", 6)).quantize_dynamic(scheme)
    b = sample((8,), "any", 7)
    wd = w.quantized_data()
    wr = dequantize_ref(wd.values, wd.scales, scheme, (16, 8))
    xq = burn.float(x).quantize_dynamic(scheme)
    xd = xq.quantized_data()
    xr = dequantize_ref(xd.values, xd.scales, scheme, (4, 16))
    if _exact(burn):
        want, want_b, want_q = x @ wr, x @ wr + b, xr @ wr
    else:  # half matmuls round their sums: compare with the backend's float path
        fx, fw, fxr = burn.float(x), burn.float(wr), burn.float(xr)
        want = fx.matmul(fw).numpy()
        want_b = module.linear(fx, fw, burn.float(b)).numpy()
        want_q = fxr.matmul(fw).numpy()
    burn.assert_close(burn.float(x).matmul(w), want, burn.loose)
    burn.assert_close(module.linear(burn.float(x), w, burn.float(b)), want_b, burn.loose)
    burn.assert_close(xq.matmul(w), want_q, burn.loose)


def test_quantized_conv_and_embedding_weights(burn):
    scheme = QuantScheme(level=QuantLevel.block(3))
    wconv = burn.float(sample((4, 2, 3, 3), "any", 8)).quantize_dynamic(scheme)
    cd = wconv.quantized_data()
    wr = dequantize_ref(cd.values, cd.scales, scheme, (4, 2, 3, 3))
    x = sample((1, 2, 5, 5), "any", 9)
    got = module.conv2d(burn.float(x), wconv)
    want = module.conv2d(burn.float(x), burn.float(wr))
    burn.assert_close(got, want.numpy(), burn.loose)
    w1 = burn.float(sample((4, 2, 3), "any", 10)).quantize_dynamic(scheme)
    d1 = w1.quantized_data()
    x1 = sample((1, 2, 7), "any", 11)
    want1 = module.conv1d(burn.float(x1), burn.float(dequantize_ref(d1.values, d1.scales, scheme, (4, 2, 3))))
    burn.assert_close(module.conv1d(burn.float(x1), w1), want1.numpy(), burn.loose)
    table = burn.float(sample((6, 6), "any", 12)).quantize_dynamic(scheme)
    td = table.quantized_data()
    tr = dequantize_ref(td.values, td.scales, scheme, (6, 6))
    idx = np.array([[0, 5, 5], [2, 1, 0]])
    burn.assert_close(module.embedding(table, burn.int(idx)), tr[idx])


def test_quantized_data_round_trip_and_display(burn):
    scheme = QuantScheme(value=QuantValue.Q2S, level=QuantLevel.block(4))
    q = burn.float(sample((2, 12), "any", 13)).quantize_dynamic(scheme)
    qd = q.quantized_data()
    r = Tensor.from_quantized_data(qd, burn.device)
    rd = r.quantized_data()
    np.testing.assert_array_equal(rd.values, qd.values)
    np.testing.assert_array_equal(rd.scales, qd.scales)
    assert r.dtype == q.dtype and r.device == burn.device
    text = str(q)
    assert "qfloat(q2s, block4, packed_u32)" in text and "shape:  [2, 12]" in text
    # 12 two-bit values a row: one int32 word (16 values) + 3 f32 scales a row
    assert qd.nbytes == 2 * 4 + 2 * 3 * 4


def test_quantize_errors_name_the_problem(burn):
    x = burn.float(sample((2, 10), "any", 14))
    with pytest.raises(TensorCheckError, match="block size 4 does not divide"):
        x.quantize_dynamic(QuantScheme(level=QuantLevel.block(4)))
    with pytest.raises(TensorCheckError, match=r"scales must have shape \[1\]"):
        x.quantize(QuantScheme(), burn.float(np.ones((2,))))
    q = x.quantize_dynamic(QuantScheme())
    with pytest.raises(TensorCheckError, match="already quantized"):
        q.quantize_dynamic(QuantScheme())
    with pytest.raises(TensorCheckError, match="expected a Float tensor"):
        burn.int(np.ones((2, 4), np.int64)).quantize_dynamic(QuantScheme())
    with pytest.raises(ValueError, match="store NATIVE"):
        QuantScheme(value=QuantValue.Q4S, store=QuantStore.NATIVE)
    assert Int is not None
