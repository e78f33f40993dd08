"""Vector products for `Tensor`: `dot` (1-D inner product) and `cross` (3-vectors along a dim)."""

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
