"""Autocast's linear on the GPU (`_gemm_lt.linear_wide` / `grads_wide` over the real
cuBLASLt): half operands with a float32 output, the float32 bias epilogue and the float32
bias-gradient epilogue are answered by cuBLASLt (not refused) for the transformer's and the
guide's shapes, against numpy float64 of the rounded operands."""

from __future__ import annotations

import numpy as np
import pytest
from burn_cuda import _gemm_lt

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_ready")]

#: (m, k, n): the transformer step's layers (4096 tokens, d 512, ff 2048), its classifier, the
#: guide's, odd sizes
SHAPES = [(4096, 512, 512), (4096, 512, 2048), (4096, 2048, 512), (32, 512, 8), (64, 784, 512),
          (33, 64, 24), (8, 16, 8)]  # fmt: skip


def _setup():
    from burn_cuda import Cuda
    from burn_tensor import TensorData

    be = Cuda()
    dev = be.device()
    put = lambda a: be.float_from_data(TensorData(a), dev)  # noqa: E731
    get = lambda p: np.asarray(be.float_into_data(p).array).astype(np.float64)  # noqa: E731
    return be, put, get


def _r(a, h):
    return np.asarray(a).astype(h.np).astype(np.float64)


@pytest.mark.parametrize("half", ["bf16", "f16"])
def test_forward_and_gradients_are_lt_gemms_writing_float32(half):
    from burn_tensor import DType

    h = {"bf16": DType.BF16, "f16": DType.F16}[half]
    f32 = DType.F32
    be, put, get = _setup()
    rng = np.random.default_rng(0)
    for m, k, n in SHAPES:
        x = rng.standard_normal((m, k)).astype(np.float32)
        w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        g = rng.standard_normal((m, n)).astype(np.float32)
        calls, grads = _gemm_lt.STATS["calls"], _gemm_lt.STATS["grad_calls"]
        out, xh, wh = be.linear_half(put(x), put(w), put(b), h)
        dx, dw, db = be.linear_half_backward(xh, wh, put(g), (f32, f32, f32))
        assert (_gemm_lt.STATS["calls"], _gemm_lt.STATS["grad_calls"]) == (calls + 2, grads + 1), (
            (m, k, n), _gemm_lt.REFUSED)  # fmt: skip
        hx, hw, hg = _r(x, h), _r(w, h), _r(g, h)
        ax, aw, ag = np.abs(hx), np.abs(hw), np.abs(hg)
        for what, got, want, mag, kk in (
            ("out", out, hx @ hw + b, ax @ aw + np.abs(b), k),
            ("dx", dx, hg @ hw.T, ag @ aw.T, n),
            ("dw", dw, hx.T @ hg, ax.T @ ag, m),
            ("db", db, hg.sum(0), ag.sum(0), m),
        ):
            # float32 sums of kk exact products (halves multiply exactly in float32)
            assert got.dtype == np.float32, what
            err = np.abs(get(got) - want)
            bound = 2 * kk * 2.0**-24 * mag + 1e-6
            assert np.all(err <= bound), (what, (m, k, n), float((err / bound).max()))
