"""Conformance: the linear-algebra family (`burn_tensor.linalg`, `Tensor.cross`, `Tensor.cov`).

`Tensor.cross(other, dim)` (the contract's `float_cross`) runs on every input layout against the
formula written out in float64 (`_ref_cross`), with the arguments it refuses.

References are numpy float64 on the rounded inputs (`np.linalg.norm`-style sums,
`np.cov`, `np.trace`, `np.diagonal`, an explicit partial-pivoting LU), plus literal values of
Burn's own tests (`crates/burn-backend-tests/tests/tensor/float/linalg/*.rs`).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from burn_tensor import Bool, Int, TensorCheckError, linalg

from .._ctx import LAYOUTS, sample

NORMS = [0, 1, 2, 3.5, -1.5, math.inf, -math.inf]


def _np_norm(x, p, axis):
    a = np.abs(x)
    if p == 0:
        return np.sum(x != 0, axis=axis, keepdims=True).astype(np.float64)
    if p == math.inf:
        return np.max(a, axis=axis, keepdims=True)
    if p == -math.inf:
        return np.min(a, axis=axis, keepdims=True)
    with np.errstate(divide="ignore"):  # 0 ** negative p is inf, as on the backend
        return np.sum(a**p, axis=axis, keepdims=True) ** (1.0 / p)


@pytest.mark.parametrize(
    "p,layout",
    [(p, ("contiguous", "permuted", "strided")[i % 3]) for i, p in enumerate(NORMS)],
    ids=[str(p) for p in NORMS],
)
def test_vector_norm_float(burn, p, layout):
    x = sample((3, 4, 5), "any", 1)
    x[0, 1, 2] = 0.0  # L0 counts it out
    t, xr = burn.view_input(x, layout=layout)
    for dim in (0, 2, -2):
        burn.assert_close(linalg.vector_norm(t, p, dim), _np_norm(xr, p, dim), burn.loose)


def test_vector_norm_named_functions(burn):
    t, xr = burn.view_input(sample((4, 6), "any", 2))
    cases = [
        (linalg.l0_norm(t, 1), _np_norm(xr, 0, 1)),
        (linalg.l1_norm(t, 1), _np_norm(xr, 1, 1)),
        (linalg.l2_norm(t, 0), _np_norm(xr, 2, 0)),
        (linalg.lp_norm(t, 3.0, 1), _np_norm(xr, 3.0, 1)),
        (linalg.max_abs_norm(t, 1), _np_norm(xr, math.inf, 1)),
        (linalg.min_abs_norm(t, 0), _np_norm(xr, -math.inf, 0)),
        (linalg.vector_norm(t, linalg.Norm.LNegInf, 1), _np_norm(xr, -math.inf, 1)),
    ]
    for got, want in cases:
        burn.assert_close(got, want, burn.loose)


@pytest.mark.parametrize("p", [0, 1, math.inf, -math.inf], ids=str)
def test_vector_norm_int(burn, p):
    t, xr = burn.view_input(sample((3, 5), "int", 3), Int, layout="flipped")
    burn.assert_equal(linalg.vector_norm(t, p, 1), _np_norm(xr, p, 1).astype(np.int64), Int)


def test_vector_norm_refusals(burn):
    with pytest.raises(TensorCheckError, match="only defined for Float"):
        linalg.l2_norm(burn.int(np.ones((2, 2))), 0)
    with pytest.raises(TensorCheckError, match="out of range"):
        linalg.l1_norm(burn.float(np.ones((2, 2))), 2)
    with pytest.raises(TensorCheckError, match="NaN"):
        linalg.vector_norm(burn.float(np.ones((2, 2))), float("nan"), 0)


def test_vector_normalize(burn):
    x = sample((3, 4), "any", 4)
    x[1] = 0.0  # a zero row divides by eps: stays zero
    t, xr = burn.view_input(x, layout="permuted")
    for p in (1, 2, math.inf):
        want = xr / np.maximum(_np_norm(xr, p, 1), 1e-6)
        burn.assert_close(linalg.vector_normalize(t, p, 1, 1e-6), want, burn.loose)


def test_cosine_similarity(burn):
    a, ar = burn.view_input(sample((3, 5), "any", 5))
    b, br = burn.view_input(sample((1, 5), "any", 6), layout="strided")
    dot = np.sum(ar * br, axis=1, keepdims=True)
    na = np.maximum(np.sqrt(np.sum(ar * ar, 1, keepdims=True)), 1e-8)
    nb = np.maximum(np.sqrt(np.sum(br * br, 1, keepdims=True)), 1e-8)
    burn.assert_close(linalg.cosine_similarity(a, b, 1), dot / (na * nb), burn.loose)
    burn.assert_close(linalg.cosine_similarity(a, b), dot / (na * nb), burn.loose)
    # Burn's literal: orthogonal and parallel rows
    x = burn.float([[1.0, 0.0], [1.0, 1.0]])
    y = burn.float([[0.0, 3.0], [2.0, 2.0]])
    burn.assert_close(linalg.cosine_similarity(x, y, -1), [[0.0], [1.0]], burn.loose)


def test_cov(burn):
    t, xr = burn.view_input(sample((3, 7), "any", 11), layout="permuted")
    burn.assert_close(t.cov(1, 1), np.cov(xr, ddof=1), burn.loose)
    burn.assert_close(t.cov(1, 0), np.cov(xr, ddof=0), burn.loose)
    # observations along dim 0: the covariance of the columns
    burn.assert_close(t.cov(0, 1), np.cov(xr.T, ddof=1), burn.loose)
    with pytest.raises(TensorCheckError, match="correction_factor"):
        t.cov(1, 7)


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (2, 5, 3)], ids=str)
def test_diag_and_trace(burn, shape):
    t, xr = burn.view_input(sample(shape, "any", 12), layout="strided")
    want = np.diagonal(xr, axis1=-2, axis2=-1)
    burn.assert_close(linalg.diag(t), want, burn.tol)
    burn.assert_close(linalg.trace(t), np.sum(want, -1, keepdims=True), burn.loose)
    ti, ir = burn.view_input(sample(shape, "int", 13), Int)
    burn.assert_equal(linalg.diag(ti), np.diagonal(ir, axis1=-2, axis2=-1), Int)
    tb = burn.bool(sample(shape, "any", 14) > 0)
    want_b = np.diagonal(sample(shape, "any", 14) > 0, axis1=-2, axis2=-1)
    burn.assert_equal(linalg.diag(tb), want_b, Bool)
    with pytest.raises(TensorCheckError, match="rank >= 2"):
        linalg.diag(burn.float(np.ones(3)))


def test_outer(burn):
    x, xr = burn.view_input(sample((2, 3), "any", 15))
    y, yr = burn.view_input(sample((2, 4), "any", 16), layout="flipped")
    burn.assert_close(linalg.outer(x, y), xr[:, :, None] * yr[:, None, :], burn.tol)
    # along dim 0, with the other dim broadcast from size 1
    u, ur = burn.view_input(sample((3, 1), "any", 17))
    v, vr = burn.view_input(sample((5, 2), "any", 18))
    burn.assert_close(linalg.outer_dim(u, v, 0), ur[:, None, :] * vr[None, :, :], burn.tol)
    xi, xir = burn.view_input(sample((3,), "int", 19), Int)
    yi, yir = burn.view_input(sample((2,), "int", 20), Int)
    burn.assert_equal(linalg.outer(xi, yi), np.outer(xir, yir), Int)


def test_matvec(burn):
    m, mr = burn.view_input(sample((2, 3, 4), "any", 21), layout="permuted")
    v, vr = burn.view_input(sample((1, 4), "any", 22))
    want = np.einsum("brc,bc->br", mr, np.broadcast_to(vr, (2, 4)))
    burn.assert_close(linalg.matvec(m, v), want, burn.loose)
    mi, mir = burn.view_input(sample((3, 2), "int", 23), Int)
    vi, vir = burn.view_input(sample((2,), "int", 24), Int)
    burn.assert_equal(linalg.matvec(mi, vi), mir @ vir, Int)
    with pytest.raises(TensorCheckError, match="inner dims"):
        linalg.matvec(burn.float(np.ones((2, 3))), burn.float(np.ones(2)))


def _np_lu(a):
    a = a.copy()
    n = a.shape[0]
    perm = list(range(n))
    for k in range(n):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        if p != k:
            a[[k, p]] = a[[p, k]]
            perm[k], perm[p] = perm[p], perm[k]
        a[k + 1 :, k] /= a[k, k]
        a[k + 1 :, k + 1 :] -= np.outer(a[k + 1 :, k], a[k, k + 1 :])
    return a, perm


def test_lu_decomposition(burn):
    # well separated pivots, so every dtype picks the same rows
    x = np.array(
        [[1.0, 2.0, 0.5, 3.0], [4.0, -1.0, 2.0, 0.0], [2.0, 6.0, -3.0, 1.0], [-0.5, 1.0, 1.0, 5.0]]
    )
    t, xr = burn.view_input(x, layout="permuted")
    lu, perm = linalg.lu_decomposition(t)
    want, wperm = _np_lu(xr)
    burn.assert_equal(perm, np.array(wperm, np.int64), Int)
    burn.assert_close(lu, want, burn.loose)
    got = lu.numpy().astype(np.float64)
    lower = np.tril(got, -1) + np.eye(4)
    np.testing.assert_allclose(lower @ np.triu(got), xr[wperm], rtol=0, atol=0.05)
    # Burn's literal: [[1, 2], [3, 4]] -> perm [1, 0], LU [[3, 4], [1/3, 2/3]]
    lu2, p2 = linalg.lu_decomposition(burn.float([[1.0, 2.0], [3.0, 4.0]]))
    burn.assert_equal(p2, np.array([1, 0]), Int)
    burn.assert_close(lu2, [[3.0, 4.0], [1 / 3, 2 / 3]], burn.literal_tol(burn.loose))
    with pytest.raises(TensorCheckError, match="singular"):
        linalg.lu_decomposition(burn.float([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(TensorCheckError, match="square"):
        linalg.lu_decomposition(burn.float(np.ones((2, 3))))


def _ref_cross(a: np.ndarray, b: np.ndarray, dim: int) -> np.ndarray:
    """out[i] = a[j] * b[k] - a[k] * b[j] for (i, j, k) = (0, 1, 2), (1, 2, 0), (2, 0, 1)."""
    a, b = np.moveaxis(a, dim, -1), np.moveaxis(b, dim, -1)
    parts = [a[..., j] * b[..., k] - a[..., k] * b[..., j] for j, k in ((1, 2), (2, 0), (0, 1))]
    return np.moveaxis(np.stack(parts, axis=-1), -1, dim)


CASES = [
    # (lhs shape, rhs shape, dim)
    ((3,), (3,), 0),
    ((4, 3), (4, 3), 1),
    ((3, 5), (3, 5), 0),
    ((2, 3, 4), (1, 3, 4), 1),  # rhs broadcast over the batch
    ((2, 4, 3), (2, 1, 3), -1),  # negative dim, rhs broadcast over the middle dim
    ((3, 1), (3, 5), 0),  # lhs broadcast over the other dim
    ((0, 3), (0, 3), 1),  # empty
]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_cross(burn, case, layout):
    sa, sb, dim = CASES[case]
    ta, a = burn.view_input(sample(sa, seed=2 * case), layout=layout)
    tb, b = burn.view_input(sample(sb, seed=2 * case + 1), layout=layout)
    burn.assert_close(ta.cross(tb, dim), _ref_cross(a, b, dim % len(sa)))


def test_cross_of_the_unit_vectors(burn):
    eye = np.eye(3)
    # x cross y = z, y cross z = x, z cross x = y, exactly
    burn.assert_close(burn.float(eye).cross(burn.float(eye[[1, 2, 0]]), 1), eye[[2, 0, 1]])


def test_cross_refuses_bad_arguments(burn):
    x = burn.float(np.ones((2, 3)))
    with pytest.raises(TensorCheckError, match=r"'cross'[\s\S]*dim 0 must have size 3"):
        x.cross(x, 0)
    with pytest.raises(TensorCheckError, match="cross"):
        x.cross(burn.float(np.ones((2, 2, 3))), 1)  # ranks differ
    with pytest.raises(TensorCheckError, match=r"dim 2 out of range"):
        x.cross(x, 2)
    with pytest.raises(TensorCheckError, match="cross"):
        burn.int(np.ones((2, 3), np.int64)).cross(burn.int(np.ones((2, 3), np.int64)), 1)
