"""Tensor methods of the linear-algebra family: `dot` (1-D inner product), `cross` (3-vectors
along a dim) and `cov` (Burn's `Tensor::cross`/`cov`).

The functions of `burn::tensor::linalg` live in `burn_tensor.linalg`; these are methods in Burn,
so they are here. `cross` and `cov` dispatch to the backend op of their name (`float_cross`, a
default in `_ops_float.py`; `float_cov`, a default in `_ops_linalg.py`).
"""

from __future__ import annotations

from . import _check as check
from ._errors import TensorCheckError


class LinalgMixin:
    def dot(self, other):
        """Inner product of two 1-D tensors -> shape [1]."""
        if self.rank() != 1 or other.rank() != 1:
            raise TensorCheckError(
                "dot", f"expected 1-D tensors, got {self.dims()} and {other.dims()}"
            )
        return self.mul(other).sum()

    def cross(self, other, dim: int):
        """Cross product of the 3-vectors along `dim` (Burn's `Tensor::cross`); Float tensors of
        equal rank, size 3 along `dim` in both, other dims equal or 1 (broadcast).

        Shapes: [.., 3, ..] x [.., 3, ..] -> [.., 3, ..]

        Example:
            >>> from burn_tensor import Tensor
            >>> from burn_ndarray import NdArray
            >>> x = Tensor.from_data([[1.0, 0.0, 0.0]], NdArray().device())
            >>> y = Tensor.from_data([[0.0, 1.0, 0.0]], NdArray().device())
            >>> x.cross(y, 1).tolist()
            [[0.0, 0.0, 1.0]]
        """
        check.float_("cross", self)
        check.binary("cross", self, other)
        d = check.dim("cross", dim, self.rank())
        if self.dims()[d] != 3 or other.dims()[d] != 3:
            raise TensorCheckError(
                "cross",
                f"dim {dim} must have size 3 in both tensors, got {self.dims()[d]} and "
                f"{other.dims()[d]}",
            )
        return self._like(self._o.cross(self._p, other._p, d))

    def cov(self, dim: int, correction_factor: int = 1):
        """Covariance with observations along `dim` (Burn's `Tensor::cov`); Float, rank >= 2.

        Centers along `dim`, swaps `dim` to the front and returns `c^T @ c / (n -
        correction_factor)` over the last two dims: for a [variables, observations] matrix and
        `dim=1`, the [variables, variables] covariance (numpy's
        `np.cov(x, ddof=correction_factor)`).

        Example:
            >>> from burn_ndarray import NdArray
            >>> from burn_tensor import Tensor
            >>> x = Tensor.from_data([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]], NdArray().device())
            >>> x.cov(1, 1).tolist()
            [[1.0, -1.0], [-1.0, 1.0]]
        """
        op = "cov"
        check.float_(op, self)
        rank = len(self._p.shape)
        if rank < 2:
            raise TensorCheckError(op, f"needs a tensor of rank >= 2, got rank {rank}")
        d = check.dim(op, dim, rank)
        n = self._p.shape[d]
        c = int(correction_factor)
        if c < 0 or n - c <= 0:
            raise TensorCheckError(
                op,
                f"correction_factor {correction_factor} must be in [0, n) with n = {n} "
                f"observations along dim {d}",
            )
        return self._like(self._o.cov(self._p, d, c))
