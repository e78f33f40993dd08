"""Quantized kernels on a real GPU: the cuBLAS int8 GEMM path of `q_matmul` (`_quant_gemm`)
against the numpy int64 product of the stored values times the float32 scale product (bitwise:
int32 accumulation is exact), and the weight-only linear (burn_gpu's qlin_packed / qlin_gemv)
against the float64 product of the dequantized weight."""

from __future__ import annotations

import numpy as np
import pytest
from burn_cuda import Cuda, _quant_gemm
from burn_tensor import Tensor, module
from burn_tensor.quantization import (
    QuantLevel,
    QuantScheme,
    QuantValue,
    dequantize_ref,
    unpack_ref,
)

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_ready")]


@pytest.mark.parametrize("m,k,n", [(4, 8, 4), (64, 1024, 96), (36, 260, 4), (512, 512, 512)])
def test_int8_matmul_through_cublas_is_exact(m, k, n):
    d = Cuda().device()
    rng = np.random.default_rng(0)
    s = QuantScheme()
    a = Tensor.from_data(rng.normal(size=(m, k)).astype(np.float32), d).quantize_dynamic(s)
    b = Tensor.from_data(rng.normal(size=(k, n)).astype(np.float32), d).quantize_dynamic(s)
    before = _quant_gemm.CALLS[0]
    got = a.matmul(b).numpy()
    if m * n * k >= 64**3:  # a tiny shape may be one cuBLAS refuses (then qmm_i8 ran)
        assert _quant_gemm.CALLS[0] == before + 1, "cuBLAS int8 path not taken"
    else:
        assert _quant_gemm.CALLS[0] == before + 1 or (m, n, k) in _quant_gemm._REFUSED
    da, db = a.quantized_data(), b.quantized_data()
    ia = unpack_ref(da.values, s, (m, k)).astype(np.int64)
    ib = unpack_ref(db.values, s, (k, n)).astype(np.int64)
    want = (ia @ ib).astype(np.float32) * np.float32(da.scales[0] * db.scales[0])
    np.testing.assert_array_equal(got, want)


def test_int8_matmul_off_multiples_of_4_takes_the_kernel():
    d = Cuda().device()
    rng = np.random.default_rng(1)
    s = QuantScheme()
    a = Tensor.from_data(rng.normal(size=(5, 203)).astype(np.float32), d).quantize_dynamic(s)
    b = Tensor.from_data(rng.normal(size=(203, 7)).astype(np.float32), d).quantize_dynamic(s)
    before = _quant_gemm.CALLS[0]
    got = a.matmul(b).numpy()
    assert _quant_gemm.CALLS[0] == before
    da, db = a.quantized_data(), b.quantized_data()
    ia, ib = unpack_ref(da.values, s, (5, 203)), unpack_ref(db.values, s, (203, 7))
    want = (ia @ ib).astype(np.float32) * np.float32(da.scales[0] * db.scales[0])
    np.testing.assert_array_equal(got, want)


SCHEMES = [
    QuantScheme(),
    QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(32)),
    QuantScheme(value=QuantValue.Q4S),
    QuantScheme(value=QuantValue.Q2F, level=QuantLevel.block(4)),
]


@pytest.mark.parametrize("scheme", SCHEMES, ids=lambda s: f"{s.value.value}-{s.level!r}")
@pytest.mark.parametrize("m", [1, 3, 40])
def test_weight_only_linear_small_and_large_batch(scheme, m):
    d = Cuda().device()
    rng = np.random.default_rng(2)
    k, n = 4096, 1056  # n: not a multiple of a work-group's column block
    w = Tensor.from_data(rng.normal(size=(k, n)).astype(np.float32) * 0.02, d)
    w = w.quantize_dynamic(scheme)
    x = rng.normal(size=(m, k)).astype(np.float32)
    got = module.linear(Tensor.from_data(x, d), w).numpy()
    wd = w.quantized_data()
    ref = x.astype(np.float64) @ dequantize_ref(wd.values, wd.scales, scheme, (k, n))
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=2e-4)
