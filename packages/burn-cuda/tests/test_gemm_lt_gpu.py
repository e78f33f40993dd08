"""cuBLASLt's bias-epilogue GEMM (`_gemm_lt.py` over `_lt_api.py`, the real library) on the GPU:
every layout `linear` hands it, against numpy float64; the call is answered by cuBLASLt (not
refused) for the transformer's and the guide's shapes; and `Cuda.linear` with a bias launches no
bias kernel of its own."""

from __future__ import annotations

import numpy as np
import pytest
from burn_cuda import _gemm_lt

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_ready")]

#: (m, k, n): the transformer step's linear layers (4096 tokens, d 512, ff 2048), the guide's,
#: odd sizes, a single row
SHAPES = [(4096, 512, 512), (4096, 512, 2048), (4096, 2048, 512), (32, 512, 8), (64, 784, 512),
          (1, 512, 10), (33, 65, 17), (7, 3, 5)]  # fmt: skip
TOL = {"float32": 2e-6, "bfloat16": 1e-2, "float16": 2e-3}


def _dtype(name):
    if name == "bfloat16":
        return np.dtype(pytest.importorskip("ml_dtypes").bfloat16)
    return np.dtype(name)


def _io(name):
    """(put, get) of numpy arrays on `Cuda(float_dtype=name)`'s device (primitives)."""
    from burn_cuda import Cuda
    from burn_tensor import TensorData

    be = Cuda(float_dtype=name)
    dev = be.device()
    put = lambda a: be.float_from_data(TensorData(a), dev)  # noqa: E731
    get = lambda p: np.asarray(be.float_into_data(p).array).astype(np.float64)  # noqa: E731
    return be, put, get


@pytest.mark.parametrize("name", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("transposed", [False, True])
def test_bias_epilogue_matches_float64(name, transposed):
    dt = _dtype(name)
    be, put, get = _io(name)
    rng = np.random.default_rng(0)
    for m, k, n in SHAPES:
        x = rng.standard_normal((m, k)).astype(dt)
        w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(dt)
        b = rng.standard_normal(n).astype(dt)
        gw = be.float_swap_dims(put(np.ascontiguousarray(w.T)), 0, 1) if transposed else put(w)
        before = _gemm_lt.STATS["calls"]
        got = _gemm_lt.linear_bias(put(x), gw, put(b))
        assert got is not None, (m, k, n, _gemm_lt.REFUSED, _gemm_lt._STATE["error"])
        assert _gemm_lt.STATS["calls"] == before + 1
        want = x.astype(np.float64) @ w.astype(np.float64) + b.astype(np.float64)
        scale = max(1.0, float(np.abs(want).max()))
        tol = TOL[name] * scale * (np.sqrt(k) if name == "float32" else 1.0)
        np.testing.assert_allclose(get(got), want, atol=tol, rtol=TOL[name])


def test_unaligned_input_is_told_to_the_heuristic():
    import cupy as cp

    rng = np.random.default_rng(1)
    x = rng.standard_normal((65, 40)).astype(np.float32)
    w = rng.standard_normal((40, 24)).astype(np.float32)
    b = rng.standard_normal(24).astype(np.float32)
    flat = cp.asarray(np.concatenate([np.zeros(1, np.float32), x.ravel()]))
    gx = flat[1:].reshape(65, 40)  # 4 bytes past a 512-byte block
    got = _gemm_lt.linear_bias(gx, cp.asarray(w), cp.asarray(b))
    assert got is not None, (_gemm_lt.REFUSED, _gemm_lt._STATE["error"])
    want = x.astype(np.float64) @ w + b
    np.testing.assert_allclose(cp.asnumpy(got), want, rtol=1e-5, atol=1e-4)


def test_cuda_linear_launches_no_bias_kernel(monkeypatch):
    from burn_cuda import Cuda, _ops_linear
    from burn_tensor import Tensor

    dev = Cuda().device()
    be = dev.backend
    rng = np.random.default_rng(2)
    x = rng.standard_normal((8, 16, 32)).astype(np.float32)
    w = rng.standard_normal((32, 12)).astype(np.float32)
    b = rng.standard_normal(12).astype(np.float32)
    px, pw, pb = (Tensor.from_data(a, dev).into_primitive() for a in (x, w, b))
    bias_kernels = []
    monkeypatch.setattr(_ops_linear, "add_bias", lambda *a: bias_kernels.append(a) or False)
    before = _gemm_lt.STATS["calls"]
    out = be.linear(px, pw, pb)
    assert _gemm_lt.STATS["calls"] == before + 1
    assert bias_kernels == []
    got = np.asarray(be.float_into_data(out).array, np.float64)
    np.testing.assert_allclose(got, x.astype(np.float64) @ w + b, rtol=1e-5, atol=1e-4)


def test_plans_past_the_bound_are_freed_and_the_next_ones_run(monkeypatch):
    """With room for 3 plans, 5 shapes no other test used, twice: the first new plan frees
    every plan this thread made before (cuBLASLt's Destroy calls on the real library, the
    other tests' plans included), each later one past the bound likewise, and every product
    stays right."""
    monkeypatch.setattr(_gemm_lt, "MAX_PLANS", 3)
    be, put, get = _io("float32")
    rng = np.random.default_rng(3)
    fresh = [(40, 24, 16), (9, 16, 8), (3, 8, 24), (17, 32, 8), (2, 16, 16)]
    for m, k, n in fresh + fresh:
        x = rng.standard_normal((m, k)).astype(np.float32)
        w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        got = _gemm_lt.linear_bias(put(x), put(w), put(b))
        assert got is not None, (m, k, n, _gemm_lt.REFUSED)
        assert len(_gemm_lt._PLANS) <= 3
        want = x.astype(np.float64) @ w.astype(np.float64) + b.astype(np.float64)
        np.testing.assert_allclose(get(got), want, atol=2e-6 * np.sqrt(k) * max(1.0, np.abs(want).max()))
