"""burn_gpu's `qlin_packed` (weight-only quantized linear) on OpenCl (PoCL in CI): packed
weights read in place, against the numpy float64 reference of the dequantized weight; inputs
with an offset (a slice) and rank 3."""

from __future__ import annotations

import numpy as np
import pytest
from burn_gpu import _quant
from burn_opencl import OpenCl
from burn_tensor import Tensor, module
from burn_tensor.quantization import QuantLevel, QuantScheme, QuantValue, dequantize_ref


@pytest.mark.parametrize(
    "scheme",
    [
        QuantScheme(),
        QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(8)),
        QuantScheme(value=QuantValue.Q2S, level=QuantLevel.block(4)),
    ],
    ids=["q8s", "q4s-b8", "q2s-b4"],
)
def test_qlin_packed_matches_reference(scheme):
    backend = OpenCl(device_type="cpu")
    d = backend.device()
    rng = np.random.default_rng(2)
    w = Tensor.from_data(rng.normal(size=(33, 40)).astype(np.float32), d).quantize_dynamic(scheme)
    full = rng.normal(size=(3, 9, 33)).astype(np.float32)
    x = Tensor.from_data(full, d)[1:3]  # a view with an offset
    got = module.linear(x, w).numpy()
    assert any(k[0] is backend for k in _quant._RUNTIMES), "the packed kernel did not run"
    wd = w.quantized_data()
    want = full[1:3].astype(np.float64) @ dequantize_ref(wd.values, wd.scales, scheme, (33, 40))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_int8_matmul_accumulates_exactly_in_int32():
    """qmm_i8: K = 203 (not a multiple of 4: the last word is zero-padded), exact int sums."""
    from burn_tensor.quantization import unpack_ref

    d = OpenCl(device_type="cpu").device()
    rng = np.random.default_rng(3)
    s = QuantScheme()
    a = Tensor.from_data(rng.normal(size=(5, 203)).astype(np.float32), d).quantize_dynamic(s)
    b = Tensor.from_data(rng.normal(size=(203, 7)).astype(np.float32), d).quantize_dynamic(s)
    da, db = a.quantized_data(), b.quantized_data()
    ia, ib = unpack_ref(da.values, s, (5, 203)), unpack_ref(db.values, s, (203, 7))
    want = (ia @ ib).astype(np.float32) * np.float32(da.scales[0] * db.scales[0])
    np.testing.assert_array_equal(a.matmul(b).numpy(), want)


@pytest.mark.parametrize(
    "scheme",
    [
        QuantScheme(),  # per tensor: the scale at the end
        QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(8)),  # a scale a word
        QuantScheme(value=QuantValue.Q2S, level=QuantLevel.block(4)),  # a scale a value
    ],
    ids=["q8s", "q4s-b8", "q2s-b4"],
)
def test_qlin_gemv_small_batch_matches_reference(scheme):
    """qlin_gemv (M <= 8): K = 300 spans several K slices, N = 136 several groups of word
    columns (2-bit: the last word half padding), rows 1 and 3, x a view with an offset."""
    from burn_gpu import _quant_gemv

    backend = OpenCl(device_type="cpu")
    d = backend.device()
    rng = np.random.default_rng(4)
    w = Tensor.from_data(rng.normal(size=(300, 136)).astype(np.float32), d).quantize_dynamic(scheme)
    wd = w.quantized_data()
    ref_w = dequantize_ref(wd.values, wd.scales, scheme, (300, 136))
    full = rng.normal(size=(4, 300)).astype(np.float32)
    rt = backend.kernels_of(Tensor.from_data(full, d)._p)
    before = _quant_gemv.LAUNCHES[0]
    for rows in (slice(1, 2), slice(1, 4)):
        x = Tensor.from_data(full, d)[rows]
        got = module.linear(x, w).numpy()
        np.testing.assert_allclose(got, full[rows].astype(np.float64) @ ref_w, rtol=1e-4, atol=1e-4)
    assert _quant_gemv.LAUNCHES[0] >= before + 2, "qlin_gemv did not run"
    v = _quant_gemv.default_variant(rt)
    assert 300 > min(v.g, rt.max_group) // v.wt  # K > KS: several K slices meet


@pytest.mark.parametrize(
    "scheme",
    [
        QuantScheme(),  # 64 words a row: per tensor
        QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(8)),  # 32 words, a scale a word
        QuantScheme(value=QuantValue.Q2S, level=QuantLevel.block(4)),  # 16 words, a scale a value
    ],
    ids=["q8s", "q4s-b8", "q2s-b4"],
)
def test_qlin_gemv_vector_loads_and_fused_bias(scheme):
    """qlin_gemv's default OpenCL variant with its 16-byte loads (N = 256: the words of a row
    are a multiple of 4), rank-3 x [1, 2, K], the float32 bias added in the kernel's store;
    then the variant with x staged in local memory, launched directly."""
    from burn_gpu import _quant_gemv

    backend = OpenCl(device_type="cpu")
    d = backend.device()
    rng = np.random.default_rng(7)
    w = Tensor.from_data(rng.normal(size=(300, 256)).astype(np.float32), d).quantize_dynamic(scheme)
    wd = w.quantized_data()
    ref_w = dequantize_ref(wd.values, wd.scales, scheme, (300, 256))
    x = rng.normal(size=(1, 2, 300)).astype(np.float32)
    b = rng.normal(size=256).astype(np.float32)
    xt = Tensor.from_data(x, d)
    got = module.linear(xt, w, Tensor.from_data(b, d)).numpy()
    want = x.astype(np.float64) @ ref_w + b
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    rt, qp = backend.kernels_of(xt._p), w._p
    offs = [_quant._c_offset(rt, a) for a in (xt._p, qp.values, qp.scales)]
    words, bits, block = qp.values.shape[-1], scheme.value.bits, scheme.level.block_size or 0
    for v in (_quant_gemv.default_variant(rt), _quant_gemv.GemvVariant(128, 4, 4, False, True)):
        out = rt.empty((2, 256), np.dtype(np.float32))
        plan = _quant_gemv.run_gemv(rt, out, xt._p, qp.values, qp.scales, 2, 300, 256, words, bits, block, offs, v)
        assert plan.variant.vec == min(4, bits) and plan.variant.xs == v.xs  # 2-bit: VEC 2
        np.testing.assert_allclose(xt._like(out).numpy(), want[0] - b, rtol=1e-4, atol=1e-4)
