"""Linear-algebra op family: Burn's `burn::tensor::linalg` functions and `Tensor::cov`
(`float_cross` is a float op: `_ops_float.py`).

Every op here is a default decomposition over other backend ops (Burn writes them the same way),
so every backend runs them and Autodiff differentiates them through the ops they are made of. A
backend with a faster kernel overrides the op of the same name.

Conventions (the Tensor layer guarantees them, see `burn_tensor.linalg`):
- `dim` is non-negative and in range; `p` is a float: 0, 1, 2, inf, -inf or any other exponent.
- `{k}_vector_norm` on Int takes p in {0, 1, inf, -inf} only (Burn's `Numeric` norms).
- Results keep the reduced dim (size 1), as Burn's `sum_dim`.
"""

from __future__ import annotations

import math

import numpy as np

from ._data import TensorData
from ._errors import TensorCheckError

#: |pivot| at or below this is singular for `lu_decomposition` (Burn's `lu_decomposition_pivot`)
LU_PIVOT_EPS = 1e-6


def _dtype_of(x):
    from ._dtype import DType

    return DType.from_np(x.dtype)



def make_linalg_defaults(k: str) -> dict:
    """Default linear-algebra ops for kind prefix `k` ("float" or "int")."""

    def op(self, name):
        return getattr(self, f"{k}_{name}")

    def vector_norm(self, x, p, dim):
        """Norm of order `p` along `dim` (kept): L0 counts non-zeros, inf/-inf are max/min |x|."""
        p = float(p)
        if p == 0.0:
            into = self.bool_into_float if k == "float" else self.bool_into_int
            ones = into(op(self, "not_equal_elem")(x, 0), _dtype_of(x))
            return op(self, "sum_dim")(ones, dim)
        a = op(self, "abs")(x)
        if p == 1.0:
            return op(self, "sum_dim")(a, dim)
        if p == math.inf:
            return op(self, "max_dim")(a, dim)
        if p == -math.inf:
            return op(self, "min_dim")(a, dim)
        if k != "float":
            raise TypeError(f"int_vector_norm: p={p} needs a Float tensor (L0, L1, inf, -inf)")
        if p == 2.0:
            return self.float_sqrt(self.float_sum_dim(self.float_square(a), dim))
        s = self.float_sum_dim(self.float_powf_scalar(a, p), dim)
        return self.float_powf_scalar(s, 1.0 / p)

    def diag(self, x):
        """Diagonal of the last two dims: [..., r, c] -> [..., min(r, c)]."""
        shape = tuple(x.shape)
        r, c = shape[-2], shape[-1]
        n = min(r, c)
        flat = op(self, "reshape")(x, shape[:-2] + (r * c,))
        idx = self.int_arange_step(0, n * (c + 1), c + 1, self.device_of(x), self.int_dtype)
        return op(self, "select")(flat, len(shape) - 2, idx)

    def outer(self, x, y, dim):
        """Outer product along `dim`: result[..., i, j, ...] = x[..., i, ...] * y[..., j, ...]."""
        sx, sy = tuple(x.shape), tuple(y.shape)
        xe = op(self, "reshape")(x, sx[: dim + 1] + (1,) + sx[dim + 1 :])
        ye = op(self, "reshape")(y, sy[:dim] + (1,) + sy[dim:])
        return op(self, "mul")(xe, ye)

    def matvec(self, m, v):
        """[..., r, c] x [..., c] -> [..., r] (batch dims broadcast)."""
        sv = tuple(v.shape)
        out = op(self, "matmul")(m, op(self, "reshape")(v, sv + (1,)))
        return op(self, "reshape")(out, tuple(out.shape)[:-1])

    fns = {"vector_norm": vector_norm, "diag": diag, "outer": outer, "matvec": matvec}
    out = {}
    for name, fn in fns.items():
        full = f"{k}_{name}"
        fn.__name__ = fn.__qualname__ = full
        out[full] = fn
    return out


class LinalgOps:
    """Linear-algebra ops. Float and Int share `vector_norm`, `diag`, `outer`, `matvec`."""

    def bool_diag(self, x):
        shape = tuple(x.shape)
        r, c = shape[-2], shape[-1]
        n = min(r, c)
        flat = self.bool_reshape(x, shape[:-2] + (r * c,))
        idx = self.int_arange_step(0, n * (c + 1), c + 1, self.device_of(x), self.int_dtype)
        return self.bool_select(flat, len(shape) - 2, idx)

    def float_vector_normalize(self, x, p, dim, eps):
        """x / max(vector_norm(x, p, dim), eps) (Burn's `vector_normalize`)."""
        n = self.float_clamp_min(self.float_vector_norm(x, p, dim), eps)
        return self.float_div(x, n)

    def float_cosine_similarity(self, x1, x2, dim, eps):
        """sum(x1 * x2) / (max(|x1|, eps) * max(|x2|, eps)) along `dim` (kept), as Burn."""
        dot = self.float_sum_dim(self.float_mul(x1, x2), dim)
        n1 = self.float_clamp_min(self.float_vector_norm(x1, 2.0, dim), eps)
        n2 = self.float_clamp_min(self.float_vector_norm(x2, 2.0, dim), eps)
        return self.float_div(dot, self.float_mul(n1, n2))

    def float_cov(self, x, dim, correction_factor):
        """Covariance with observations along `dim` (Burn's `Tensor::cov`): the centered tensor
        with `dim` swapped to the front, `c^T @ c / (n - correction_factor)` over the last two
        dims. For a [variables, observations] matrix and dim=1: the [variables, variables]
        covariance matrix."""
        n = x.shape[dim]
        centered = self.float_sub(x, self.float_mean_dim(x, dim))
        c = self.float_swap_dims(centered, dim, 0)
        ct = self.float_transpose(c)
        return self.float_div_scalar(self.float_matmul(ct, c), float(n - correction_factor))

    def float_trace(self, x):
        """Sum of the diagonal of the last two dims: [..., r, c] -> [..., 1]."""
        d = self.float_diag(x)
        return self.float_sum_dim(d, len(d.shape) - 1)

    def float_lu_decomposition(self, x):
        """Partial-pivoting LU of a square matrix -> (LU combined [n, n], permutation [n] int).

        `P A = L U` with `L` unit lower (below the diagonal of the result) and `U` upper (on and
        above it); `perm[i]` is the row of `A` at row i of `P A`. The pivot of column k is the
        first largest |a_ik| at or below the diagonal (Burn's algorithm); a pivot with
        |a_kk| <= 1e-6 raises (Burn: singular or near-singular). One host read per column.
        """
        n = x.shape[0]
        perm = list(range(n))
        t = x
        for k in range(n):
            col = self.float_abs(self.float_slice(t, (slice(k, n, 1), slice(k, k + 1, 1))))
            p = int(self.int_into_data(self.float_argmax(col, 0)).array.reshape(-1)[0]) + k
            pivot = float(self.float_into_data(col).array.reshape(-1)[p - k])
            if not abs(pivot) > LU_PIVOT_EPS:  # NaN pivots are singular too
                raise TensorCheckError(
                    "lu_decomposition",
                    f"singular or near-singular matrix: pivot {pivot} of column {k} has "
                    f"|pivot| <= {LU_PIVOT_EPS}",
                )
            if p != k:
                rk = (slice(k, k + 1, 1), slice(0, n, 1))
                rp = (slice(p, p + 1, 1), slice(0, n, 1))
                row_k = self.float_slice(t, rk)
                t = self.float_slice_assign(t, rk, self.float_slice(t, rp))
                t = self.float_slice_assign(t, rp, row_k)
                perm[k], perm[p] = perm[p], perm[k]
            if k == n - 1:
                break
            below = (slice(k + 1, n, 1), slice(k, k + 1, 1))
            akk = self.float_slice(t, (slice(k, k + 1, 1), slice(k, k + 1, 1)))
            lcol = self.float_div(self.float_slice(t, below), akk)
            t = self.float_slice_assign(t, below, lcol)
            # trailing update as one outer product: a[i, j] -= l[i] * a[k, j] for i, j > k
            trail = (slice(k + 1, n, 1), slice(k + 1, n, 1))
            urow = self.float_slice(t, (slice(k, k + 1, 1), slice(k + 1, n, 1)))
            upd = self.float_sub(self.float_slice(t, trail), self.float_mul(lcol, urow))
            t = self.float_slice_assign(t, trail, upd)
        perm_p = self.int_from_data(
            TensorData(np.asarray(perm, dtype=self.int_dtype.np)), self.device_of(x)
        )
        return t, perm_p


for _k in ("float", "int"):
    for _name, _fn in make_linalg_defaults(_k).items():
        setattr(LinalgOps, _name, _fn)
