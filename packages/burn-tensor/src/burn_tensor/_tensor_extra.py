"""Tensor odds and ends of Burn 0.20: `take`, `slice_dim`, `max_abs_dims`, `one_hot_fill`.

`take` and `one_hot_fill` dispatch to backend ops with default decompositions
(`_ops_extra.py`); `slice_dim` and `max_abs_dims` are one `slice` / a fold of `max_abs_dim`,
exactly as Burn writes them, so they reach those ops directly.
"""

from __future__ import annotations

import operator

from . import _check as check
from . import _check_data as check_data
from ._errors import TensorCheckError


class ExtraMixin:
    def take(self, dim: int, indices):
        """Elements along `dim` at Int `indices` of any rank (Burn's `take`, numpy's `take`).

        Args:
            dim: the dim to index (negative counts from the end).
            indices: an Int tensor (or nested lists) of values in [0, size of dim).

        Shapes: [.., n, ..] (n at `dim`) with indices [i0, .., ik] -> [.., i0, .., ik, ..].

        Example:
            >>> from burn_ndarray import NdArray
            >>> from burn_tensor import Tensor
            >>> t = Tensor.from_data([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], NdArray().device())
            >>> t.take(1, [[0, 2], [1, 0]]).tolist()
            [[[1.0, 3.0], [2.0, 1.0]], [[4.0, 6.0], [5.0, 4.0]]]
        """
        d = check.dim("take", dim, len(self._p.shape))
        idx = self._indices("take", indices)
        check_data.indices_in_range("take", idx, d, self._p.shape[d])
        return self._like(self._o.take(self._p, d, idx._p))

    def slice_dim(self, dim: int, item):
        """Slice one dim, keep the others whole (Burn's `slice_dim`): `item` is an int (a
        size-1 dim), a `slice` (steps, negative steps) or a `range`.

        Example:
            >>> from burn_ndarray import NdArray
            >>> from burn_tensor import Tensor
            >>> t = Tensor.zeros([3, 4, 5], NdArray().device())
            >>> t.slice_dim(2, slice(0, 5, 2)).dims(), t.slice_dim(0, 1).dims()
            ([3, 4, 3], [1, 4, 5])
        """
        d = check.dim("slice_dim", dim, len(self._p.shape))
        if isinstance(item, range):
            item = slice(item.start, item.stop, item.step)
        items = [slice(None)] * len(self._p.shape)
        items[d] = item
        return self.slice(items)

    def max_abs_dims(self, dims):
        """max |x| over several dims, each kept with size 1 (Burn's `max_abs_dims`).

        Example:
            >>> from burn_ndarray import NdArray
            >>> from burn_tensor import Tensor
            >>> t = Tensor.from_data([[1.0, -2.0, 3.0], [5.0, -9.0, 6.0]], NdArray().device())
            >>> t.max_abs_dims([0, 1]).tolist()
            [[9.0]]
        """
        check.numeric("max_abs_dims", self)
        rank = len(self._p.shape)
        seen = []
        for dim in dims:
            d = check.dim("max_abs_dims", dim, rank)
            if d not in seen:
                seen.append(d)
        out = self
        for d in seen:
            out = out.max_abs_dim(d)
        return out

    def one_hot_fill(self, num_classes: int, on_value, off_value, axis: int = -1):
        """One-hot encode class indices with chosen values and axis (Burn's `one_hot_fill`).

        Args:
            num_classes: size of the new dim (>= 1).
            on_value: the value at each index's class; `off_value`: everywhere else.
            axis: where the new dim goes, in [-rank - 1, rank] (-1: last).

        Indices (Float or Int; Float ones are truncated) lie in [-num_classes, num_classes);
        negative ones count from the end (-1 is the last class), as Burn.

        Shapes: [d0, .., dn] -> the same with num_classes inserted at `axis`; the result has
        this tensor's kind.

        Example:
            >>> from burn_ndarray import NdArray
            >>> from burn_tensor import Tensor
            >>> t = Tensor.from_data([[0.0, 2.0], [1.0, -1.0]], NdArray().device())
            >>> t.one_hot_fill(3, 5.0, 0.0, -1).tolist()
            [[[5.0, 0.0, 0.0], [0.0, 0.0, 5.0]], [[0.0, 5.0, 0.0], [0.0, 0.0, 5.0]]]
        """
        op = "one_hot_fill"
        check.numeric(op, self)
        rank = len(self._p.shape)
        try:
            n = operator.index(num_classes)
            ax = operator.index(axis)
        except TypeError:
            raise TensorCheckError(
                op, f"num_classes and axis must be ints, got {num_classes!r}, {axis!r}"
            ) from None
        if n < 1:
            raise TensorCheckError(op, f"num_classes must be >= 1, got {n}")
        if not -rank - 1 <= ax <= rank:
            raise TensorCheckError(op, f"axis {ax} out of range [{-rank - 1}, {rank}]")
        ax = ax + rank + 1 if ax < 0 else ax
        if 0 not in self._p.shape and check_data.enabled(self._d.backend):
            lo, hi = check_data._min_max(self)
            if not (lo >= -n and hi < n):
                bad = check_data._number(lo if not lo >= -n else hi)
                raise TensorCheckError(
                    op, f"class index {bad} out of range [{-n}, {n}) for num_classes={n}"
                )
        on = check.scalar_for(op, self, on_value)
        off = check.scalar_for(op, self, off_value)
        return self._like(self._o.one_hot_fill(self._p, n, on, off, ax))


