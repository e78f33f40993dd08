"""OpenCl float16 / bfloat16 on PoCL (which reports no cl_khr_fp16: none is needed, the kernels
compute in float32 over half storage): the backend lists and accepts both, the ops of a layer
match numpy float64 on the half-rounded inputs, and the native ones run without widening their
operands to float32."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from burn_opencl import OpenCl

ml_dtypes = pytest.importorskip("ml_dtypes")
NP = {"float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16)}
EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7}
#: the OpenCL device type (conftest's: `BURN_OPENCL_TEST_DEVICE_TYPE=gpu` on the GPU machine)
DEVICE_TYPE = os.environ.get("BURN_OPENCL_TEST_DEVICE_TYPE", "cpu")


def _r(x, dt):
    return np.asarray(x, np.float64).astype(NP[dt]).astype(np.float64)


def _get(t) -> np.ndarray:
    return np.asarray(t.into_data().array).astype(np.float64)


def test_every_device_lists_both_half_types():
    from burn_opencl._spec import SPEC

    rows = SPEC.half_types()
    assert rows
    for row in rows:
        assert row.dtypes == ("float16", "bfloat16"), row
        assert "float32 compute" in row.note


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_layer_ops_in_half(dt):
    from burn_opencl import _ew
    from burn_tensor import Tensor, activation
    from burn_tensor.ops import adam_update

    backend = OpenCl(DEVICE_TYPE, float_dtype=dt)
    d = backend.device()
    rng = np.random.default_rng(3)
    x, w, bias = (
        rng.standard_normal((5, 24)),
        rng.standard_normal((24, 7)),
        rng.standard_normal((1, 7)),
    )
    tx, tw, tb = (Tensor.from_data(a, d) for a in (x, w, bias))
    assert tx.dtype.value == dt and np.asarray(tx.into_data().array).dtype == NP[dt]
    rx, rw, rb = _r(x, dt), _r(w, dt), _r(bias, dt)
    tol = {"rtol": 2 * EPS[dt], "atol": 2 * EPS[dt]}
    # count the casts to float32 the native ops must not launch
    casts = []
    real_cast = _ew.cast

    def counting(a, dtype):
        casts.append(np.dtype(dtype).name)
        return real_cast(a, dtype)

    _ew.cast = counting
    try:
        h = activation.gelu(tx * 0.5 + 1.0)
        want_h = _r(rx * 0.5 + 1.0, dt)
        want_h = want_h * 0.5 * (1 + np.vectorize(math.erf)(want_h / math.sqrt(2)))
        np.testing.assert_allclose(_get(h), want_h, **tol)
        np.testing.assert_allclose(_get(tx.sum_dim(1)), rx.sum(1, keepdims=True), **tol)
        np.testing.assert_allclose(_get(tx.mean()), [rx.mean()], **tol)
        sm = activation.log_softmax(tx, 1)
        want = rx - rx.max(1, keepdims=True)
        want = want - np.log(np.exp(want).sum(1, keepdims=True))
        np.testing.assert_allclose(_get(sm), want, rtol=2 * EPS[dt], atol=4 * EPS[dt])
        np.testing.assert_array_equal(_get(tx.transpose()), rx.T)
        idx = Tensor.from_data(np.array([4, 0, 2]), d)
        np.testing.assert_array_equal(_get(tx.select(0, idx)), rx[[4, 0, 2]])  # int16 copies
        new, m1, _m2 = adam_update(
            tx, tx, None, None, lr=0.1, beta_1=0.9, beta_2=0.999, epsilon=1e-8, time=1
        )
        assert new.dtype.value == dt and m1.dtype.value == dt
        np.testing.assert_allclose(_get(new), rx - 0.1 * np.sign(rx), **tol)
        _layer_norm_and_gelu_backward(backend, tx, rx, dt)  # native: no cast around them
        native_casts = list(casts)
        y = tx @ tw + tb  # matmul: the float32 detour (widen, float32 GEMM, round once)
        np.testing.assert_allclose(
            _get(y), _r(_r(rx @ rw, dt) + rb, dt), rtol=4 * EPS[dt], atol=4 * EPS[dt]
        )
    finally:
        _ew.cast = real_cast
    assert native_casts == [], native_casts
    assert "float32" in casts  # the detour widened the matmul's operands


def _layer_norm_and_gelu_backward(backend, tx, rx, dt):
    """layer_norm, its backward and gelu_backward on half tensors against numpy float64 on
    the stored values (float32 statistics and sums, each output rounded once)."""
    from burn_tensor import Tensor, module

    d = tx.device
    rng = np.random.default_rng(4)
    gamma, beta, go = rng.standard_normal(24), rng.standard_normal(24), rng.standard_normal((5, 24))
    tg, tbeta, tgo = (Tensor.from_data(a, d) for a in (gamma, beta, go))
    rg, rbeta, rgo = _r(gamma, dt), _r(beta, dt), _r(go, dt)
    c = rx - rx.mean(1, keepdims=True)
    rstd = 1 / np.sqrt((c * c).mean(1, keepdims=True) + 1e-5)
    xh = c * rstd
    tol = {"rtol": 2 * EPS[dt], "atol": 8 * EPS[dt]}
    np.testing.assert_allclose(_get(module.layer_norm(tx, tg, tbeta, 1e-5)), xh * rg + rbeta, **tol)
    read = lambda p: np.asarray(backend.float_into_data(p).array).astype(np.float64)  # noqa: E731
    prims = [t.into_primitive() for t in (tx, tg, tgo)]
    dx, dgamma, dbeta = backend.layer_norm_backward(*prims, 1e-5)
    gg = rgo * rg
    want = rstd * (gg - gg.mean(1, keepdims=True) - xh * (gg * xh).mean(1, keepdims=True))
    np.testing.assert_allclose(read(dx), want, **tol)
    np.testing.assert_allclose(read(dgamma), (rgo * xh).sum(0), **tol)
    np.testing.assert_allclose(read(dbeta), rgo.sum(0), **tol)
    cdf = 0.5 * (1 + np.vectorize(math.erf)(rx / math.sqrt(2)))
    pdf = np.exp(-0.5 * rx * rx) / math.sqrt(2 * math.pi)
    got = read(backend.gelu_backward(prims[0], prims[2]))
    np.testing.assert_allclose(got, rgo * (cdf + rx * pdf), **tol)
