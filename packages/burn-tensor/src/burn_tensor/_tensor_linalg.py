"""Tensor methods of the linear-algebra family: `cross` and `cov` (Burn's `Tensor::cross`/`cov`).

The functions of `burn::tensor::linalg` live in `burn_tensor.linalg`; these two are methods in
Burn, so they are here. Both dispatch to the backend op of their name (`float_cross`,
`float_cov`), a default decomposition in `_ops_linalg.py`.
"""

from __future__ import annotations

from . import _check as check
from ._errors import TensorCheckError


class LinalgMixin:
    def cross(self, other, dim: int = -1):
        """Cross product of 3-vectors along `dim` (Burn's `Tensor::cross`); Float only.

        Args:
            other: a Float tensor of the same rank; dims other than `dim` broadcast.
            dim: the dim holding the 3 components (size 3 in both; negative counts from the end).

        Shapes: [..., 3, ...] x [..., 3, ...] -> their broadcast shape.

        Example:
            >>> from burn_ndarray import NdArray
            >>> from burn_tensor import Tensor
            >>> dev = NdArray().device()
            >>> a = Tensor.from_data([[1.0, 0.0, 0.0]], dev)
            >>> a.cross(Tensor.from_data([[0.0, 1.0, 0.0]], dev), 1).tolist()
            [[0.0, 0.0, 1.0]]
        """
        op = "cross"
        check.float_(op, self)
        check.binary(op, self, other)
        d = check.dim(op, dim, len(self._p.shape))
        sa, sb = self._p.shape[d], other._p.shape[d]
        if sa != 3 or sb != 3:
            raise TensorCheckError(
                op, f"dim {d} must have size 3 in both tensors, got {sa} and {sb}"
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
