"""Direct cuBLAS matmul (`_gemm.py`): every operand layout it takes in place (row-major,
transposed views, batches, a broadcast batch, size-1 dims) against numpy float64, and the
layouts it must leave to cupy's matmul (it returns None for them)."""

from __future__ import annotations

import numpy as np
import pytest
from burn_cuda import Cuda, _gemm
from burn_tensor import Tensor

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_ready")]

SHAPES = [(1, 1, 1), (3, 5, 7), (64, 1024, 10), (1, 9, 4), (6, 1, 5), (7, 4, 1), (33, 65, 17)]


def _operand(cp, a, transposed):
    """`a` on the GPU, row-major or as the transposed view of a row-major copy of a.T."""
    if transposed:
        return cp.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2))).swapaxes(-1, -2)
    return cp.asarray(a)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("tx", [False, True])
@pytest.mark.parametrize("ty", [False, True])
def test_2d_layouts(dtype, tx, ty):
    import cupy as cp

    rng = np.random.default_rng(0)
    for m, k, n in SHAPES:
        a = rng.standard_normal((m, k)).astype(dtype)
        b = rng.standard_normal((k, n)).astype(dtype)
        got = _gemm.matmul(_operand(cp, a, tx), _operand(cp, b, ty))
        assert got is not None, (m, k, n, tx, ty)
        want = a.astype(np.float64) @ b.astype(np.float64)
        tol = 1e-4 * np.sqrt(k) if dtype == "float32" else 1e-12 * np.sqrt(k)
        np.testing.assert_allclose(cp.asnumpy(got), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batched_and_broadcast_batch(dtype):
    import cupy as cp

    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 5, 4)).astype(dtype)
    b = rng.standard_normal((2, 3, 4, 6)).astype(dtype)
    b1 = rng.standard_normal((1, 1, 4, 6)).astype(dtype)
    cases = [
        (cp.asarray(a), cp.asarray(b), a @ b),
        (_operand(cp, a, True), _operand(cp, b, True), a @ b),
        (cp.asarray(a), cp.asarray(b1), a @ b1),
        # a broadcast transposed view [1, 1, 6, 4] against a row-major batch [2, 3, 4, 5]
        (cp.asarray(b1).swapaxes(-1, -2), cp.asarray(a).swapaxes(-1, -2).copy(), None),
    ]
    for x, y, want in cases:
        got = _gemm.matmul(x, y)
        assert got is not None
        if want is None:
            want = cp.asnumpy(x).astype(np.float64) @ cp.asnumpy(y).astype(np.float64)
        np.testing.assert_allclose(cp.asnumpy(got), want, rtol=1e-4, atol=1e-4)


def test_uncovered_layouts_are_left_to_cupy():
    import cupy as cp

    a = cp.ones((4, 6), cp.float32)
    assert _gemm.matmul(a[:, ::2], cp.ones((3, 2), cp.float32)) is None  # strided columns
    assert _gemm.matmul(a, cp.ones((6, 2), cp.float64)) is None  # mixed dtypes
    assert _gemm.matmul(cp.ones((2, 4, 6)), cp.ones((3, 6, 2))) is None  # batch mismatch
    assert _gemm.matmul(cp.ones((4, 6), cp.int32), cp.ones((6, 2), cp.int32)) is None
    assert _gemm.matmul(cp.ones((0, 6), cp.float32), cp.ones((6, 2), cp.float32)) is None


def test_backend_matmul_takes_the_direct_path_and_tf32_does_not(monkeypatch):
    calls = []
    real = _gemm.matmul
    monkeypatch.setattr(_gemm, "matmul", lambda x, y: calls.append(1) or real(x, y))
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    d = Cuda().device()
    got = Tensor.from_data(x, d).matmul(Tensor.from_data(x.T.copy(), d))
    np.testing.assert_allclose(got.to_data().numpy(), x.astype(np.float64) @ x.T, rtol=1e-6)
    assert calls == [1]
    Tensor.from_data(x, Cuda(allow_tf32=True).device()).matmul(
        Tensor.from_data(x.T.copy(), Cuda(allow_tf32=True).device())
    )
    assert calls == [1]  # TF32 GEMMs keep cupy's matmul (its compute-type setting)


def _half_operand(cp, a, transposed):
    """A half numpy array on the GPU (bfloat16 through its 16-bit patterns: cupy's asarray may
    not take ml_dtypes' dtype), row-major or as the transposed view of a row-major copy."""
    src = np.ascontiguousarray(np.swapaxes(a, -1, -2)) if transposed else np.ascontiguousarray(a)
    dev = cp.asarray(src.view(np.uint16)).view(a.dtype)
    return dev.swapaxes(-1, -2) if transposed else dev


def _half_host(cp, x):
    return cp.asnumpy(cp.ascontiguousarray(x.view(np.uint16))).view(x.dtype)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_gemm_ex_layouts(dtype):
    """bfloat16 / float16 through cublasGemmEx (float32 compute): row-major, transposed and
    batched operands against numpy float64 of the half inputs: one rounding of the result plus
    cuBLAS's reduced-precision split-K reductions (its default, and torch's:
    `allow_bf16_reduced_precision_reduction`), at most an eighth of a half ulp of sum |a||b|.
    On the H200 a [64, 1024] @ [1024, 10] product erred up to 9.9x (bf16) and 2.5x (f16) the
    one-rounding bound (errors up to ~0.17 where sum |a||b| is ~800); a wrong layout errs
    ~|want|, far beyond either bound."""
    import cupy as cp

    ml_dtypes = pytest.importorskip("ml_dtypes")
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(np.float16)
    eps = 2.0**-8 if dtype == "bfloat16" else 2.0**-11
    rng = np.random.default_rng(3)
    cases = [((m, k), (k, n)) for m, k, n in SHAPES] + [((2, 3, 5, 4), (2, 3, 4, 6)),
                                                        ((2, 3, 5, 4), (1, 1, 4, 6))]  # fmt: skip
    for sa, sb in cases:
        a, b = rng.standard_normal(sa).astype(dt), rng.standard_normal(sb).astype(dt)
        for tx in (False, True):
            for ty in (False, True):
                got = _gemm.matmul(_half_operand(cp, a, tx), _half_operand(cp, b, ty))
                assert got is not None and got.dtype == dt, (sa, sb, tx, ty)
                a64, b64 = a.astype(np.float64), b.astype(np.float64)
                want = a64 @ b64
                bound = eps * np.abs(want) + eps / 8 * (np.abs(a64) @ np.abs(b64))
                err = np.abs(_half_host(cp, got).astype(np.float64) - want)
                assert (err <= bound).all(), (sa, sb, tx, ty, float((err / bound).max()))
