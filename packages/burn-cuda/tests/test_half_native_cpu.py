"""`Cuda(float_dtype="bfloat16")` and `Cuda(float_dtype="float16")` on the CPU stand-in
(`cpu_backend.py`: burn_cuda's code over the fake cupy, its CUDA kernels built by g++): the
ops of a transformer layer run burn_gpu's half kernels directly -- no float32 conversion
kernel is compiled, so none runs -- and their results match numpy float64 on the half-rounded
inputs within the half type's rounding."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu

ml_dtypes = pytest.importorskip("ml_dtypes")
NP = {"bfloat16": np.dtype(ml_dtypes.bfloat16), "float16": np.dtype(np.float16)}
EPS = {"bfloat16": 2.0**-7, "float16": 2.0**-10}
#: the float32 detour's conversion kernels (`_bf16.py`)
DETOUR = {"bf16_to_f32", "f32_to_bf16"}

pytestmark = pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed")


def _r(x, dt):
    return np.asarray(x, np.float64).astype(NP[dt]).astype(np.float64)


def _get(t) -> np.ndarray:
    return np.asarray(t.into_data().array).astype(np.float64)


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_layer_ops_run_half_kernels_without_conversions(dt):
    from burn_tensor import Tensor, activation
    from burn_tensor.ops import adam_update
    from cpu_backend import cuda_on_cpu_backend

    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 40))
    bias = rng.standard_normal((1, 40))
    with cuda_on_cpu_backend(float_dtype=dt) as (backend, fake):
        d = backend.device()
        tx, tb = Tensor.from_data(x, d), Tensor.from_data(bias, d)
        assert tx.dtype.value == dt
        rx, rb = _r(x, dt), _r(bias, dt)
        tol = {"rtol": 2 * EPS[dt], "atol": 1e-3}
        h = tx + tb  # broadcast add: the strided half kernel
        want_h = _r(rx + rb, dt)
        np.testing.assert_allclose(_get(h), want_h, **tol)
        g = activation.gelu(h)
        from math import erf

        want_g = _r(want_h * 0.5 * (1 + np.vectorize(erf)(want_h / np.sqrt(2))), dt)
        np.testing.assert_allclose(_get(g), want_g, **tol)
        mu = h.mean_dim(1)  # float32 accumulation, one rounding
        np.testing.assert_allclose(_get(mu), _r(want_h.mean(1, keepdims=True), dt), **tol)
        t = h.transpose()  # data movement on the 16-bit patterns
        np.testing.assert_array_equal(_get(t), want_h.T)
        np.testing.assert_allclose(_get(t.sum_dim(0)), _r(want_h.sum(1)[None], dt), **tol)
        sm = activation.softmax(h, 1)
        e = np.exp(want_h - want_h.max(1, keepdims=True))
        np.testing.assert_allclose(
            _get(sm), e / e.sum(1, keepdims=True), rtol=2 * EPS[dt], atol=1e-4
        )
        np.testing.assert_array_equal(_get(h.argmax(1)).ravel(), np.argmax(want_h, 1))
        from burn_tensor.module import layer_norm

        ln = layer_norm(h, tb.reshape([40]), tb.reshape([40]) * 0.5, 1e-5)  # a block per row
        c = want_h - want_h.mean(1, keepdims=True)
        xhat = c / np.sqrt((c * c).mean(1, keepdims=True) + 1e-5)
        rb2 = _r(rb * 0.5, dt)
        np.testing.assert_allclose(_get(ln), xhat * rb + rb2, rtol=2 * EPS[dt], atol=4 * EPS[dt])
        mask = h.greater_elem(0.0)
        np.testing.assert_array_equal(np.asarray(mask.into_data().array), want_h > 0)
        new, m1, _m2 = adam_update(
            tx, tb.expand([6, 40]), None, None, lr=0.01, beta_1=0.9, beta_2=0.999,
            epsilon=1e-8, time=1,
        )  # fmt: skip
        assert new.dtype.value == dt and m1.dtype.value == dt
        np.testing.assert_allclose(_get(new), rx - 0.01 * np.sign(rb), rtol=2 * EPS[dt], atol=1e-3)
        assert not DETOUR & set(fake.compiled), sorted(fake.compiled)
        assert any(name.startswith("fused_") for name in fake.compiled)


def test_float32_moments_stay_float32_for_a_bf16_parameter():
    """A mixed-precision optimizer keeps float32 moments: the half Adam kernel reads and writes
    them as float32 (no rounding of the state to bfloat16)."""
    from burn_tensor import DType, Tensor
    from burn_tensor.ops import adam_update
    from cpu_backend import cuda_on_cpu_backend

    rng = np.random.default_rng(1)
    p, g = rng.standard_normal(100), rng.standard_normal(100)
    m1, m2 = rng.standard_normal(100) * 1e-3, rng.random(100) * 1e-6
    with cuda_on_cpu_backend(float_dtype="bfloat16") as (backend, _fake):
        d = backend.device()
        tp, tg = Tensor.from_data(p, d), Tensor.from_data(g, d)
        # from_data stores the backend's bfloat16; the cast gives float32 moments
        tm1 = Tensor.from_data(m1, d).cast(DType.F32)
        tm2 = Tensor.from_data(m2, d).cast(DType.F32)
        m1, m2 = _r(m1, "bfloat16"), _r(m2, "bfloat16")
        new, a, b = adam_update(
            tp, tg, tm1, tm2, lr=0.1, beta_1=0.9, beta_2=0.999, epsilon=1e-8, time=2
        )
        assert a.dtype is DType.F32 and b.dtype is DType.F32 and new.dtype is DType.BF16
        rg = _r(g, "bfloat16")
        w1 = 0.9 * m1 + 0.1 * rg  # not rounded to bfloat16: float32 state
        w2 = 0.999 * m2 + 0.001 * rg**2
        np.testing.assert_allclose(_get(a), w1, rtol=1e-5, atol=1e-9)
        np.testing.assert_allclose(_get(b), w2, rtol=1e-5, atol=1e-12)
        bc2 = np.sqrt(1 - 0.999**2)
        want = _r(p, "bfloat16") - 0.1 * (w1 * bc2 / (1 - 0.9**2)) / (np.sqrt(w2) + 1e-8 * bc2)
        np.testing.assert_allclose(_get(new), want, rtol=2 * EPS["bfloat16"], atol=1e-3)


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_long_column_sums_take_the_column_kernels_in_float32(dt):
    """sum / mean / max over a long dim other than the last (a bias gradient's sum over the
    batch): burn_gpu's column kernels (chunk partials in float32, one rounding), not a thread
    walking each whole column (`sum_rows`: 200 us per call on the H200). 3000 values near 1: a
    half running sum would stall at 256 (bfloat16) / 2048 (float16)."""
    from burn_tensor import Tensor
    from cpu_backend import cuda_on_cpu_backend

    rng = np.random.default_rng(4)
    x = 1.0 + rng.uniform(0, 1e-3, (3000, 17))
    y = rng.standard_normal((2, 700, 33))
    with cuda_on_cpu_backend(float_dtype=dt) as (backend, fake):
        d = backend.device()
        tx, ty = Tensor.from_data(x, d), Tensor.from_data(y, d)
        rx, ry = _r(x, dt), _r(y, dt)
        start = len(fake.launches)
        got = _get(tx.sum_dim(0))
        names = [k.name for k in fake.launches[start:]]
        assert names == ["sum_cols", "sum_cols_fin"], names
        # float32 partials and sums: numpy's float64 sum rounded once to the half type
        np.testing.assert_array_equal(got, _r(rx.sum(0, keepdims=True), dt))
        tol = {"rtol": EPS[dt], "atol": 1e-6}
        np.testing.assert_allclose(_get(tx.mean_dim(0)), _r(rx.mean(0, keepdims=True), dt), **tol)
        np.testing.assert_allclose(_get(ty.sum_dim(1)), _r(ry.sum(1, keepdims=True), dt),
                                   rtol=EPS[dt], atol=4 * EPS[dt])  # fmt: skip
        np.testing.assert_array_equal(_get(ty.max_dim(1)), ry.max(1, keepdims=True))
        np.testing.assert_array_equal(_get(ty.min_dim(1)), ry.min(1, keepdims=True))
        a = ty.sum_dim(1).into_data().array
        assert np.asarray(a).tobytes() == np.asarray(ty.sum_dim(1).into_data().array).tobytes()
        assert any(k.name == "max_cols" for k in fake.launches[start:])
