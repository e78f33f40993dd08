"""layer_norm, layer_norm_backward, gelu and gelu_backward on Cuda over the CPU stand-in
(`cpu_backend.py`; the kernels built by g++): each runs as burn_gpu's kernels -- one launch for
layer_norm, three for its backward (dx per row, then dgamma/dbeta as per-run partials and a
pass over the runs), one for gelu and one for gelu_backward -- in float32, float64 and the half
types, where burn-tensor's decompositions launched 10, 19, 5 (4 own and cupyx's erf) and 10
kernels on float32. Values are compared with numpy float64 on the stored (rounded) inputs."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu

pytestmark = pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed")

DTYPES = ("float32", "float64", "bfloat16", "float16")
#: relative rounding step of the stored type (the kernels round each output once)
EPS = {"float32": 2.0**-23, "float64": 2.0**-52, "bfloat16": 2.0**-8, "float16": 2.0**-11}
_erf = np.vectorize(math.erf)


def _np_dtype(dt):
    if dt == "bfloat16":
        return np.dtype(pytest.importorskip("ml_dtypes").bfloat16)
    return np.dtype(dt)


def _ref_grads(x, gamma, g, eps):
    """burn-tensor's formula in float64 (`_ops_norm.py`)."""
    d = x.shape[-1]
    xf, gf = x.reshape(-1, d), g.reshape(-1, d)
    c = xf - xf.mean(1, keepdims=True)
    rstd = 1.0 / np.sqrt((c * c).mean(1, keepdims=True) + eps)
    xh = c * rstd
    gg = gf * gamma
    dx = rstd * (gg - gg.mean(1, keepdims=True) - xh * (gg * xh).mean(1, keepdims=True))
    return xh, dx.reshape(x.shape), (gf * xh).sum(0), gf.sum(0)


def _close(got, want, dt, scale=1.0):
    # a sum over a row in float32 (halves) or the type: a few steps of the largest value
    tol = 8 * max(EPS[dt], 2.0**-23) * max(1.0, float(np.abs(want).max())) * scale
    np.testing.assert_allclose(got, want, rtol=4 * EPS[dt], atol=tol)


@pytest.mark.parametrize("warp", [True, False], ids=["warp_rows", "block_rows"])
@pytest.mark.parametrize("dt", DTYPES)
def test_layer_norm_and_gelu_launch_one_kernel_each_and_backward_three(dt, warp, monkeypatch):
    # warp_rows: rows of 48 take the warp-per-row kernels (8 rows a block: 74 rows leave the
    # last block 2, its other warps past `rows`); block_rows: a block per row (longer rows)
    from burn_gpu import _norm_bwd, _ops_norm
    from burn_tensor import TensorData
    from cpu_backend import cuda_on_cpu_backend

    npdt = _np_dtype(dt)
    rng = np.random.default_rng(3)
    # 2 x 37 rows of 48 with 256 partial items: 6 runs of 13 rows (the last of 9) for dgamma /
    # dbeta, as a GPU-sized tensor gets (the stand-in emulates every thread: few rows)
    monkeypatch.setattr(_norm_bwd, "PART_ITEMS", 256)
    assert _norm_bwd.bwd_chunks(74, 48) == (6, 13)
    if not warp:
        monkeypatch.setattr(_ops_norm, "WARP_ROW_MAX", 0)
    w = "_w" if warp else ""
    x = (rng.standard_normal((2, 37, 48)) * 2 + 0.5).astype(npdt)
    gamma, beta = (rng.standard_normal(48).astype(npdt) for _ in range(2))
    g = rng.standard_normal(x.shape).astype(npdt)
    x64, ga64, b64, g64 = (a.astype(np.float64) for a in (x, gamma, beta, g))
    with cuda_on_cpu_backend(float_dtype=dt) as (be, fake):
        dev = be.device()
        put = lambda a: be.float_from_data(TensorData(a), dev)  # noqa: E731
        get = lambda p: np.asarray(be.float_into_data(p).array).astype(np.float64)  # noqa: E731
        px, pg, pb, pgo = put(x), put(gamma), put(beta), put(g)

        def launched(fn):
            fake.launches.clear()
            out = fn()
            return out, [launch.name for launch in fake.launches]

        xh, dx, dgamma, dbeta = _ref_grads(x64, ga64, g64, 1e-5)
        out, names = launched(lambda: be.layer_norm(px, pg, pb, 1e-5))
        assert names == ["layer_norm_rows" + w]
        _close(get(out), xh.reshape(x.shape) * ga64 + b64, dt)
        grads, names = launched(lambda: be.layer_norm_backward(px, pg, pgo, 1e-5))
        assert names == ["layer_norm_bwd_rows" + w, "layer_norm_bwd_part", "layer_norm_bwd_cols"]
        for got, want in zip(grads, (dx, dgamma, dbeta)):
            assert got.dtype == npdt
            _close(get(got), want, dt, scale=4.0)

        cdf = 0.5 * (1 + _erf(x64 / math.sqrt(2)))
        out, names = launched(lambda: be.gelu(px))
        assert len(names) == 1, names
        _close(get(out), x64 * cdf, dt)
        pdf = np.exp(-0.5 * x64 * x64) / math.sqrt(2 * math.pi)
        out, names = launched(lambda: be.gelu_backward(px, pgo))
        assert len(names) == 1, names
        _close(get(out), g64 * (cdf + x64 * pdf), dt)


def test_layer_norm_backward_over_no_rows_gives_zero_parameter_grads():
    from burn_tensor import TensorData
    from cpu_backend import cuda_on_cpu_backend

    with cuda_on_cpu_backend() as (be, _fake):
        dev = be.device()
        put = lambda a: be.float_from_data(TensorData(a.astype(np.float32)), dev)  # noqa: E731
        dx, dgamma, dbeta = be.layer_norm_backward(
            put(np.zeros((0, 5))), put(np.ones(5)), put(np.zeros((0, 5))), 1e-5
        )
        assert dx.shape == (0, 5)
        for p in (dgamma, dbeta):
            np.testing.assert_array_equal(np.asarray(be.float_into_data(p).array), np.zeros(5))
