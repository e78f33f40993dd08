"""Linear algebra on tensors: Burn's `burn::tensor::linalg` (`burn.tensor.linalg` in the facade).

Norms reduce along one dim and keep it (size 1), as Burn's `sum_dim`. Each function checks its
arguments (one `TensorCheckError` naming the function and what is wrong) and dispatches to the
backend op of its name (`float_vector_norm`, `float_lu_decomposition`, ...), whose default
decomposition runs on every backend and is differentiated by Autodiff through its parts.

Example:
    >>> from burn_ndarray import NdArray
    >>> from burn_tensor import Tensor, linalg
    >>> x = Tensor.from_data([[3.0, -4.0], [1.0, 0.0]], NdArray().device())
    >>> linalg.l2_norm(x, 1).tolist()
    [[5.0], [1.0]]
    >>> linalg.vector_norm(x, linalg.Norm.LInf, 1).tolist()
    [[4.0], [1.0]]
"""

from __future__ import annotations

import math
import numbers

from . import _check as check
from ._dtype import Int
from ._errors import TensorCheckError

#: cosine_similarity's default epsilon (Burn's `DEFAULT_EPSILON`)
DEFAULT_EPSILON = 1e-8

__all__ = [
    "DEFAULT_EPSILON",
    "Norm",
    "cosine_similarity",
    "diag",
    "l0_norm",
    "l1_norm",
    "l2_norm",
    "lp_norm",
    "lu_decomposition",
    "matvec",
    "max_abs_norm",
    "min_abs_norm",
    "outer",
    "outer_dim",
    "trace",
    "vector_norm",
    "vector_normalize",
]


class Norm:
    """The order of a vector norm (Burn's `Norm` enum): `Norm.L0`, `L1`, `L2`, `LInf`,
    `LNegInf`, `Norm.Lp(p)`. Functions taking a norm also take a number: 0, 1, 2,
    `math.inf`, `-math.inf` or any other p, as Burn's `From<f64> for Norm`.

    Example:
        >>> Norm.Lp(3).p, Norm.from_any(float("inf")) == Norm.LInf
        (3.0, True)
    """

    __slots__ = ("p",)

    def __init__(self, p: float):
        object.__setattr__(self, "p", float(p))

    def __setattr__(self, name, value):
        raise AttributeError("Norm is immutable")

    @staticmethod
    def Lp(p: float) -> Norm:  # noqa: N802 - Burn's variant name
        """The general L(p) norm."""
        return Norm(p)

    @staticmethod
    def from_any(norm) -> Norm:
        """A `Norm` from a `Norm` or a real number (NaN refused)."""
        if isinstance(norm, Norm):
            return norm
        if isinstance(norm, numbers.Real) and not isinstance(norm, bool):
            if math.isnan(float(norm)):
                raise TensorCheckError("vector_norm", "norm order p is NaN")
            return Norm(float(norm))
        raise TensorCheckError(
            "vector_norm", f"norm must be a Norm or a number (0, 1, 2, inf, -inf, p), got {norm!r}"
        )

    def __eq__(self, other) -> bool:
        return isinstance(other, Norm) and other.p == self.p

    def __hash__(self) -> int:
        return hash(("Norm", self.p))

    def __repr__(self) -> str:
        names = {0.0: "L0", 1.0: "L1", 2.0: "L2", math.inf: "LInf", -math.inf: "LNegInf"}
        return f"Norm.{names[self.p]}" if self.p in names else f"Norm.Lp({self.p})"


Norm.L0 = Norm(0.0)
Norm.L1 = Norm(1.0)
Norm.L2 = Norm(2.0)
Norm.LInf = Norm(math.inf)
Norm.LNegInf = Norm(-math.inf)

_INT_ORDERS = (0.0, 1.0, math.inf, -math.inf)


def _tensor(op: str, x, name: str = "x"):
    from ._tensor import Tensor

    if not isinstance(x, Tensor):
        raise TensorCheckError(op, f"{name} must be a Tensor, got {type(x).__name__}")


def vector_norm(x, norm, dim: int):
    """Vector norm of `x` along `dim`, kept with size 1 (Burn's `linalg::vector_norm`).

    Args:
        x: a Float tensor; an Int tensor for L0, L1, LInf and LNegInf (the result is Int).
        norm: a `Norm` or a number: 0 (count of non-zeros), 1, 2, inf (max |x|), -inf
            (min |x|), any other p: (sum |x|^p)^(1/p).
        dim: the reduced dim (negative counts from the end).

    Shapes: [d0, .., dn] -> the same with d_dim = 1.

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_tensor import Tensor
        >>> x = Tensor.from_data([[1.0, -2.0, 2.0]], NdArray().device())
        >>> vector_norm(x, 2, -1).tolist(), vector_norm(x, 0, 1).tolist()
        ([[3.0]], [[3.0]])
    """
    op = "vector_norm"
    _tensor(op, x)
    p = Norm.from_any(norm).p
    check.numeric(op, x)
    d = check.dim(op, dim, len(x._p.shape))
    if x._o.kind is Int and p not in _INT_ORDERS:
        raise TensorCheckError(
            op, f"norm p={p} is only defined for Float tensors (Int takes L0, L1, LInf, LNegInf)"
        )
    return x._like(x._o.vector_norm(x._p, p, d))


def l0_norm(x, dim: int):
    """Number of non-zero elements along `dim`, kept (Float or Int, Burn's `l0_norm`)."""
    return vector_norm(x, Norm.L0, dim)


def l1_norm(x, dim: int):
    """Sum of |x| along `dim`, kept (Float or Int, Burn's `l1_norm`)."""
    return vector_norm(x, Norm.L1, dim)


def l2_norm(x, dim: int):
    """Euclidean norm along `dim`, kept (Float, Burn's `l2_norm`)."""
    return vector_norm(x, Norm.L2, dim)


def lp_norm(x, p: float, dim: int):
    """(sum |x|^p)^(1/p) along `dim`, kept (Float, Burn's `lp_norm`)."""
    return vector_norm(x, Norm.Lp(p), dim)


def max_abs_norm(x, dim: int):
    """max |x| along `dim`, kept: the L-infinity norm (Float or Int, Burn's `max_abs_norm`)."""
    return vector_norm(x, Norm.LInf, dim)


def min_abs_norm(x, dim: int):
    """min |x| along `dim`, kept: the L-negative-infinity norm (Burn's `min_abs_norm`)."""
    return vector_norm(x, Norm.LNegInf, dim)


def vector_normalize(x, norm, dim: int, eps: float):
    """`x / vector_norm(x, norm, dim).clamp_min(eps)` (Float, Burn's `vector_normalize`).

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_tensor import Tensor
        >>> x = Tensor.from_data([[3.0, 4.0], [0.0, 0.0]], NdArray(float_dtype="float64").device())
        >>> vector_normalize(x, 2, 1, 1e-12).tolist()
        [[0.6, 0.8], [0.0, 0.0]]
    """
    op = "vector_normalize"
    _tensor(op, x)
    check.float_(op, x)
    p = Norm.from_any(norm).p
    d = check.dim(op, dim, len(x._p.shape))
    return x._like(x._o.vector_normalize(x._p, p, d, check.scalar_for(op, x, eps)))


def cosine_similarity(x1, x2, dim: int = -1, eps: float | None = None):
    """Cosine similarity of `x1` and `x2` along `dim`, kept (Burn's `cosine_similarity`):
    `sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps))`, eps defaults to 1e-8.

    Shapes: x1 and x2 of one rank, broadcastable; the result has their broadcast shape with
    d_dim = 1.

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_tensor import Tensor
        >>> dev = NdArray().device()
        >>> a = Tensor.from_data([[1.0, 0.0], [1.0, 1.0]], dev)
        >>> b = Tensor.from_data([[0.0, 2.0], [2.0, 2.0]], dev)
        >>> [round(v, 6) for v in cosine_similarity(a, b, 1).reshape([2]).tolist()]
        [0.0, 1.0]
    """
    op = "cosine_similarity"
    _tensor(op, x1, "x1")
    check.float_(op, x1)
    check.binary(op, x1, x2)
    d = check.dim(op, dim, len(x1._p.shape))
    e = DEFAULT_EPSILON if eps is None else check.scalar_for(op, x1, eps)
    return x1._like(x1._o.cosine_similarity(x1._p, x2._p, d, e))


def diag(x):
    """Diagonal of the last two dims (Burn's `linalg::diag`), any kind.

    Shapes: [..., r, c] -> [..., min(r, c)].
    """
    op = "diag"
    _tensor(op, x)
    if len(x._p.shape) < 2:
        raise TensorCheckError(op, f"needs a tensor of rank >= 2, got rank {len(x._p.shape)}")
    return x._like(x._o.diag(x._p))


def trace(x):
    """Sum of the diagonal of the last two dims (Float, Burn's `linalg::trace`).

    Shapes: [..., r, c] -> [..., 1].

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_tensor import Tensor
        >>> trace(Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], NdArray().device())).tolist()
        [5.0]
    """
    op = "trace"
    _tensor(op, x)
    check.float_(op, x)
    if len(x._p.shape) < 2:
        raise TensorCheckError(op, f"needs a tensor of rank >= 2, got rank {len(x._p.shape)}")
    return x._like(x._o.trace(x._p))


def outer_dim(x, y, dim: int):
    """Outer product along `dim`, broadcasting the other dims (Burn's `outer_dim`).

    Shapes: x [..., m, ...] and y [..., n, ...] (one rank) -> [..., m, n, ...] (rank + 1), with
    result[..., i, j, ...] = x[..., i, ...] * y[..., j, ...].
    """
    op = "outer"
    _tensor(op, x)
    check.numeric(op, x)
    _tensor(op, y, "y")
    if x._o.kind is not y._o.kind:
        raise TensorCheckError(op, f"kinds differ: {x._o.kind.value} and {y._o.kind.value}")
    check.same_device(op, x, y)
    sx, sy = x._p.shape, y._p.shape
    if len(sx) != len(sy):
        raise TensorCheckError(op, f"ranks differ: {list(sx)} vs {list(sy)}")
    d = check.dim(op, dim, len(sx))
    bad = [i for i in range(len(sx)) if i != d and sx[i] != sy[i] and 1 not in (sx[i], sy[i])]
    if bad:
        raise TensorCheckError(
            op, f"shapes {list(sx)} and {list(sy)} are not broadcastable at dim(s) {bad}"
        )
    return x._like(x._o.outer(x._p, y._p, d))


def outer(x, y):
    """Outer product of the last dims (Burn's `linalg::outer`).

    Shapes: [..., m] and [..., n] -> [..., m, n].

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_tensor import Tensor
        >>> dev = NdArray().device()
        >>> a, b = Tensor.from_data([1.0, 2.0], dev), Tensor.from_data([3.0, 4.0, 5.0], dev)
        >>> outer(a, b).tolist()
        [[3.0, 4.0, 5.0], [6.0, 8.0, 10.0]]
    """
    return outer_dim(x, y, -1)


def matvec(matrix, vector):
    """Matrix-vector product with broadcast batch dims (Burn's `linalg::matvec`).

    Shapes: [..., r, c] and [..., c] -> [..., r]; rank(vector) == rank(matrix) - 1.
    """
    op = "matvec"
    _tensor(op, matrix, "matrix")
    _tensor(op, vector, "vector")
    check.numeric(op, matrix)
    sm, sv = matrix._p.shape, vector._p.shape
    problems = []
    if vector._o.kind is not matrix._o.kind:
        problems.append(f"kinds differ: {matrix._o.kind.value} and {vector._o.kind.value}")
    if matrix._d is not vector._d:
        problems.append(check.device_mismatch(matrix, vector, ("matrix", "vector")))
    if len(sm) < 2:
        problems.append(f"the matrix must have rank >= 2, got {list(sm)}")
    elif len(sv) != len(sm) - 1:
        problems.append(f"the vector must have rank {len(sm) - 1}, got {list(sv)}")
    else:
        if sm[-1] != sv[-1]:
            problems.append(f"inner dims differ: matrix has {sm[-1]} columns, vector {sv[-1]}")
        bad = [i for i in range(len(sv) - 1) if sm[i] != sv[i] and 1 not in (sm[i], sv[i])]
        if bad:
            problems.append(f"batch dims of {list(sm)} and {list(sv)} differ at {bad}")
    if problems:
        raise TensorCheckError(op, problems)
    return vector._like(matrix._o.matvec(matrix._p, vector._p))


def lu_decomposition(x):
    """Partial-pivoting LU of a square Float matrix (Burn's `linalg::lu_decomposition`).

    Returns `(lu, perm)`: `lu` [n, n] holds `L` below the diagonal (unit diagonal implied) and
    `U` on and above it; `perm` [n] (Int) lists the rows of `x` in pivot order, so
    `x.select(0, perm) == L @ U`. A pivot with |pivot| <= 1e-6 raises `TensorCheckError`
    (singular or near-singular matrix). Reads one pivot per column back to the host.

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_tensor import Tensor
        >>> x = Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], NdArray().device())
        >>> lu, perm = lu_decomposition(x)
        >>> perm.tolist(), [[round(v, 4) for v in r] for r in lu.tolist()]
        ([1, 0], [[3.0, 4.0], [0.3333, 0.6667]])
    """
    op = "lu_decomposition"
    _tensor(op, x)
    check.float_(op, x)
    s = x._p.shape
    if len(s) != 2 or s[0] != s[1]:
        raise TensorCheckError(op, f"needs a square matrix [n, n], got {list(s)}")
    from ._tensor import Tensor

    lu, perm = x._o.lu_decomposition(x._p)
    return x._like(lu), Tensor._make(perm, Int, x._d)
