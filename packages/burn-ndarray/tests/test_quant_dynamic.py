"""`NdArray(quantize_activations=True)`: quantized Linear / Conv2d with an 8-bit per-tensor
weight quantize their input on the fly and multiply in int8 x int8 -> int32 (`_native/q8gemm.c`).

Checked against a numpy reference of the same arithmetic (scale = max |x| / 127 per row / image,
round half away from zero, exact int64 sums, float32 scaling): equal up to float32 rounding
of the last multiply-add. The kernel this CPU runs (VNNI, AVX2 or plain C) is the one the
backend built; the AVX2 and plain-C kernels are built here too and run on the same cases."""

from __future__ import annotations

import ctypes
import gc
import shutil

import numpy as np
import pytest
from burn_ndarray import NdArray, _native_quant, _quant_dynamic
from burn_tensor import Tensor, module
from burn_tensor.quantization import QuantScheme, QuantStore, QuantValue, unpack_ref

pytestmark = pytest.mark.skipif(_native_quant.lib() is None, reason=_native_quant.status())
F = np.float32


def _qrows(x):
    """The kernel's activation quantization of the rows of x [R, n]: (int64 values, scales)."""
    am = np.abs(x).max(axis=1)
    s = np.where(am > 0, am / F(127), F(1)).astype(F)
    r = np.clip((x * (F(1) / s)[:, None]).astype(F), -127, 127)
    return np.trunc((r + np.where(r < 0, F(-0.5), F(0.5))).astype(F)).astype(np.int64), s


def _linear_ref(x, q, ws, bias):
    xq, xs = _qrows(x)
    y = (xq @ q.astype(np.int64)).astype(F) * (xs * F(ws)).astype(F)[:, None]
    return y if bias is None else y + bias


def _conv_ref(x, q, ws, bias, stride, pad, dil, rows_per):
    """The conv of the kernel's arithmetic: per (image, block of `rows_per` output rows) one
    activation scale over the input rows the block reads."""
    b, c, h, w = x.shape
    co, _, kh, kw = q.shape
    oh = (h + 2 * pad - dil * (kh - 1) - 1) // stride + 1
    ow = (w + 2 * pad - dil * (kw - 1) - 1) // stride + 1
    out = np.empty((b, co, oh, ow), F)
    for n in range(b):
        for o0 in range(0, oh, rows_per):
            o1 = min(oh, o0 + rows_per)
            lo = min(max(o0 * stride - pad, 0), h)
            hi = max(min((o1 - 1) * stride - pad + (kh - 1) * dil + 1, h), lo)
            xs = x[n, :, lo:hi]
            _, s = _qrows(xs.reshape(1, -1))
            r = np.clip((x[n] * (F(1) / s[0])).astype(F), -127, 127)
            xq = np.trunc((r + np.where(r < 0, F(-0.5), F(0.5))).astype(F)).astype(np.int64)
            xq = np.pad(xq, ((0, 0), (pad, pad), (pad, pad)))
            acc = np.zeros((co, oh, ow), np.int64)
            for i in range(kh):
                for j in range(kw):
                    patch = xq[:, i * dil : i * dil + stride * (oh - 1) + 1 : stride,
                               j * dil : j * dil + stride * (ow - 1) + 1 : stride]  # fmt: skip
                    acc += np.einsum("oc,chw->ohw", q[:, :, i, j].astype(np.int64), patch)
            y = acc.astype(F) * (s[0] * F(ws)) + bias[:, None, None]
            out[n, :, o0:o1] = y[:, o0:o1]
    return out


@pytest.mark.parametrize("store", list(QuantStore), ids=lambda s: s.value)
@pytest.mark.parametrize("value", [QuantValue.Q8S, QuantValue.Q8F], ids=["q8s", "q8f"])
def test_dynamic_linear_matches_the_same_arithmetic(store, value):
    d = NdArray(num_threads=2, quantize_activations=True).device()
    rng = np.random.default_rng(0)
    # K = 37 (not a multiple of 4), N = 21 (a partial 16-column panel), 2 x 5 rows (partial
    # row tiles); one all-zero row (its scale is 1, its outputs the bias)
    scheme = QuantScheme(value=value, store=store)
    w = Tensor.from_data(rng.normal(size=(37, 21)).astype(F), d).quantize_dynamic(scheme)
    x = rng.normal(size=(2, 5, 37)).astype(F)
    x[1, 2] = 0
    bias = rng.normal(size=21).astype(F)
    got = module.linear(Tensor.from_data(x, d), w, Tensor.from_data(bias, d)).numpy()
    wd = w.quantized_data()
    want = _linear_ref(x.reshape(10, 37), unpack_ref(wd.values, scheme, (37, 21)), wd.scales[0], bias)
    np.testing.assert_allclose(got.reshape(10, 21), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("stride,pad,dil", [(1, 0, 1), (2, 1, 2), (1, 2, 1)])
def test_dynamic_conv2d_matches_the_same_arithmetic(stride, pad, dil):
    d = NdArray(num_threads=2, quantize_activations=True).device()
    rng = np.random.default_rng(1)
    scheme = QuantScheme()
    w = Tensor.from_data(rng.normal(size=(11, 3, 3, 2)).astype(F), d).quantize_dynamic(scheme)
    x = rng.normal(size=(3, 3, 13, 35)).astype(F)  # rows of 35 > 16: runs and partial panels
    x[2] = 0
    bias = rng.normal(size=11).astype(F)
    got = module.conv2d(Tensor.from_data(x, d), w, Tensor.from_data(bias, d), stride, pad, dil).numpy()
    wd = w.quantized_data()
    q = unpack_ref(wd.values, scheme, (11, 3, 3, 2))
    rows_per = _native_quant.lib().q8_conv_rows_per_task(got.shape[-1])
    want = _conv_ref(x, q, wd.scales[0], bias, stride, pad, dil, rows_per)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_off_by_default_and_other_weights_stay_weight_only():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(4, 40)).astype(F)
    for backend, scheme in (
        (NdArray(num_threads=2), QuantScheme()),  # the default: weight-only
        (NdArray(num_threads=2, quantize_activations=True), QuantScheme(value=QuantValue.Q4S)),
    ):
        d = backend.device()
        w = Tensor.from_data(rng.normal(size=(40, 24)).astype(F), d).quantize_dynamic(scheme)
        got = module.linear(Tensor.from_data(x, d), w).numpy()
        want = x.astype(np.float64) @ w.dequantize().numpy().astype(np.float64)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert NdArray(quantize_activations=True).options()["quantize_activations"] is True
    assert "quantize_activations=True" in repr(NdArray(quantize_activations=True))
    with pytest.raises(TypeError, match="quantize_activations must be a bool"):
        NdArray(quantize_activations=1)


def test_prepared_weight_is_kept_while_the_weight_lives():
    d = NdArray(num_threads=2, quantize_activations=True).device()
    rng = np.random.default_rng(3)
    w = Tensor.from_data(rng.normal(size=(64, 32)).astype(F), d).quantize_dynamic(QuantScheme())
    x = Tensor.from_data(rng.normal(size=(3, 64)).astype(F), d)
    before = len(_quant_dynamic._PREPARED)
    first = module.linear(x, w).numpy()
    assert len(_quant_dynamic._PREPARED) == before + 1
    np.testing.assert_array_equal(module.linear(x, w).numpy(), first)  # reused, same result
    assert len(_quant_dynamic._PREPARED) == before + 1
    del w
    gc.collect()
    assert len(_quant_dynamic._PREPARED) == before


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
@pytest.mark.parametrize("flags", [["-mavx2"], []], ids=["avx2", "plain-c"])
def test_other_isa_kernels_match(flags):
    """The kernels this CPU does not pick, built from the same source and run on a linear and
    a conv case (weights with -128, the AVX2 kernel's |w| = 128 case)."""
    import platform

    if flags and platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("AVX2 is x86-64 only")
    lib = ctypes.CDLL(str(_native_quant.build_variant(flags)))  # the int8 GEMM and conv
    p, L, i, f = ctypes.c_void_p, ctypes.c_long, ctypes.c_int, ctypes.c_float
    lib.q8_isa.restype = i
    assert lib.q8_isa() == (1 if flags else 0)
    lib.q8_packed_bytes.restype, lib.q8_packed_bytes.argtypes = L, (L, L)
    lib.q8_packed_cols.restype, lib.q8_packed_cols.argtypes = L, (L,)
    lib.q8_pack_b.argtypes = (p, L, L, L, p, p, i)
    lib.q8_linear.restype, lib.q8_linear.argtypes = i, (p, L, L, p, p, L, f, p, p, i)
    lib.q8_conv2d.restype = i
    lib.q8_conv2d.argtypes = (p, L, L, L, L, p, L, L, L, L, f, p, p, L, L) + (L,) * 6 + (i,)
    rng = np.random.default_rng(4)
    m, k, n = 7, 45, 19
    x = rng.normal(size=(m, k)).astype(F)
    q = rng.integers(-128, 128, size=(k, n)).astype(np.int8)
    q[0, :] = -128
    wp = np.empty(lib.q8_packed_bytes(k, n), np.int8)
    wsum = np.empty(lib.q8_packed_cols(n), np.int32)
    lib.q8_pack_b(q.ctypes.data, n, k, n, wp.ctypes.data, wsum.ctypes.data, 2)
    bias = rng.normal(size=n).astype(F)
    y = np.empty((m, n), F)
    assert lib.q8_linear(x.ctypes.data, m, k, wp.ctypes.data, wsum.ctypes.data, n, 0.01,
                         bias.ctypes.data, y.ctypes.data, 2) == 0  # fmt: skip
    np.testing.assert_allclose(y, _linear_ref(x, q, 0.01, bias), rtol=1e-6, atol=1e-6)
    xc = rng.normal(size=(2, 3, 30, 20)).astype(F)  # 30 output rows: 3 blocks of 12
    qc = rng.integers(-128, 128, size=(5, 3, 3, 3)).astype(np.int8)
    qc[:, 0] = -128
    kp = 28  # 27 rounded up to whole quads, zero past K
    rows = np.zeros((5, kp), np.int8)
    rows[:, :27] = qc.reshape(5, 27)
    bc = rng.normal(size=5).astype(F)
    yc = np.empty((2, 5, 30, 20), F)
    assert lib.q8_conv2d(xc.ctypes.data, 2, 3, 30, 20, rows.ctypes.data, kp, 5, 3, 3, 0.02,
                         bc.ctypes.data, yc.ctypes.data, 30, 20, 1, 1, 1, 1, 1, 1, 2) == 0  # fmt: skip
    lib.q8_conv_rows_per_task.restype, lib.q8_conv_rows_per_task.argtypes = L, (L,)
    want = _conv_ref(xc, qc, 0.02, bc, 1, 1, 1, lib.q8_conv_rows_per_task(20))
    np.testing.assert_allclose(yc, want, rtol=1e-6, atol=1e-6)
    y1 = np.empty_like(yc)  # one thread: the same blocks, the same result bitwise
    assert lib.q8_conv2d(xc.ctypes.data, 2, 3, 30, 20, rows.ctypes.data, kp, 5, 3, 3, 0.02,
                         bc.ctypes.data, y1.ctypes.data, 30, 20, 1, 1, 1, 1, 1, 1, 1) == 0  # fmt: skip
    np.testing.assert_array_equal(y1, yc)
