"""`burn_tensor.linalg`, `Tensor.cross`, `Tensor.cov`: argument checks and hand-derived values.

Numerics on every backend are in the conformance suite (burn_backend_tests/suites/linalg.py);
here: the typed errors, the `Norm` helper and Burn's own literal expectations.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_tensor import Tensor, TensorCheckError, linalg
from burn_tensor.linalg import Norm

DEV = NdArray(float_dtype="float64").device()


def t(x):
    return Tensor.from_data(np.asarray(x, dtype=np.float64), DEV)


def test_norm_from_numbers_and_names():
    assert Norm.from_any(0) == Norm.L0 and Norm.from_any(math.inf) == Norm.LInf
    assert Norm.from_any(-math.inf) == Norm.LNegInf and Norm.Lp(3).p == 3.0
    assert repr(Norm.L2) == "Norm.L2" and repr(Norm.Lp(1.5)) == "Norm.Lp(1.5)"
    with pytest.raises(TensorCheckError, match="must be a Norm or a number"):
        Norm.from_any("fro")
    with pytest.raises(TensorCheckError, match="must be a Norm or a number"):
        Norm.from_any(True)


def test_burn_literal_norms():
    # Burn's vector_norm.rs: [[1, -2], [3, -4]] along dim 1
    x = t([[1.0, -2.0], [3.0, -4.0]])
    assert linalg.l1_norm(x, 1).tolist() == [[3.0], [7.0]]
    assert linalg.max_abs_norm(x, 1).tolist() == [[2.0], [4.0]]
    assert linalg.min_abs_norm(x, 1).tolist() == [[1.0], [3.0]]
    assert linalg.l0_norm(t([[0.0, 1.0], [0.0, 0.0]]), 1).tolist() == [[1.0], [0.0]]
    np.testing.assert_allclose(linalg.l2_norm(x, 0).numpy(), [[math.sqrt(10), math.sqrt(20)]])


def test_cov_is_numpy_cov():
    x = np.array([[0.0, 2.0, 4.0, 1.0], [1.0, -1.0, 0.5, 3.0]])
    np.testing.assert_allclose(t(x).cov(1, 1).numpy(), np.cov(x), rtol=1e-12)
    with pytest.raises(TensorCheckError, match="rank >= 2"):
        t([1.0, 2.0]).cov(0)


def test_cross_checks_name_the_problem():
    a = t(np.ones((2, 3)))
    with pytest.raises(TensorCheckError, match="size 3 in both tensors, got 2 and 2"):
        a.cross(a, 0)
    with pytest.raises(TensorCheckError, match="Float"):
        a.int().cross(a.int(), 1)
    with pytest.raises(TensorCheckError, match="not broadcastable"):
        a.cross(t(np.ones((3, 3))), 1)


def test_matvec_and_outer_checks():
    with pytest.raises(TensorCheckError, match="rank 1"):
        linalg.matvec(t(np.ones((2, 3))), t(np.ones((1, 3))))
    with pytest.raises(TensorCheckError, match="rank >= 2"):
        linalg.matvec(t(np.ones(3)), t(np.ones(3)))
    with pytest.raises(TensorCheckError, match="kinds differ"):
        linalg.outer(t(np.ones(3)), t(np.ones(3)).int())
    with pytest.raises(TensorCheckError, match="not broadcastable"):
        linalg.outer(t(np.ones((2, 3))), t(np.ones((3, 3))))


def test_lu_reconstructs_and_refuses_singular():
    a = np.array([[2.0, 1.0, 1.0], [4.0, -6.0, 0.0], [-2.0, 7.0, 2.0]])
    lu, perm = linalg.lu_decomposition(t(a))
    m = lu.numpy()
    np.testing.assert_allclose((np.tril(m, -1) + np.eye(3)) @ np.triu(m), a[perm.tolist()])
    with pytest.raises(TensorCheckError, match="column 1"):
        linalg.lu_decomposition(t([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(TensorCheckError, match="square"):
        linalg.lu_decomposition(t(np.ones((2, 2, 2))))


def test_facade_path():
    import burn.tensor.linalg as facade

    assert facade.vector_norm is linalg.vector_norm
