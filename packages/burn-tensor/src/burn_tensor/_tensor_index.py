"""Slicing (`slice`, `t[...]`, `slice_assign`) and indexing (`select`, `gather`, `scatter`,
`mask_where`, `mask_fill`) of `Tensor`."""

from __future__ import annotations

import numpy as np

from . import _check as check
from . import _check_data as check_data
from ._data import TensorData
from ._dtype import Bool
from ._errors import TensorCheckError
from ._slice import normalize


class IndexMixin:
    __slots__ = ()

    # -- slicing ---------------------------------------------------------------------------------------
    def slice(self, *items):
        """Burn's `slice`: rank is kept; ints give size-1 dims; negative indices and steps allowed."""
        if len(items) == 1 and isinstance(items[0], list | tuple):
            items = items[0]
        slices, _ = normalize("slice", tuple(items), self._p.shape)
        return self._like(self._o.slice(self._p, slices))

    def unfold(self, dim: int, size: int, step: int):
        """Sliding windows of `size` elements every `step` along `dim` (Burn's `unfold`,
        torch.Tensor.unfold): `dim` becomes the window count, the window is a new last dim.

        Shapes: [.., n, ..] -> [.., (n - size) // step + 1, .., size] (0 windows if n < size).

        Example:
            >>> t = Tensor.arange(0, 5, device)  # [0, 1, 2, 3, 4]
            >>> t.unfold(0, 2, 2).tolist()
            [[0, 1], [2, 3]]
        """
        check.numeric("unfold", self)
        d = check.dim("unfold", dim, len(self._p.shape))
        if size < 1 or step < 1:
            raise TensorCheckError("unfold", f"size and step must be >= 1, got {size}, {step}")
        return self._like(self._o.unfold(self._p, d, int(size), int(step)))

    def __getitem__(self, items):
        from ._tensor import Tensor

        if isinstance(items, Tensor):
            if items._o.kind is Bool:
                raise TensorCheckError(
                    "__getitem__",
                    "boolean-mask indexing is data-dependent: use mask_where/argwhere",
                )
            check.int_indices("__getitem__", items)
            return self.select(0, items)
        items = items if isinstance(items, tuple) else (items,)
        if any(it is None for it in items):
            return self._getitem_newaxis(items)
        return self.slice(items)

    def _getitem_newaxis(self, items):
        """`t[None]`, `t[:, None]`, `t[..., None]`: each `None` inserts a size-1 dim where it
        stands, as in numpy and PyTorch; the other items slice with Burn's rules (an int keeps
        its dim with size 1)."""
        real = [it for it in items if it is not None]
        if sum(it is Ellipsis for it in real) > 1:
            raise TensorCheckError("__getitem__", "at most one `...` in an index")
        if any(it is Ellipsis for it in real):
            # `...` stands for the dims no other item names, so it expands before the `None`s
            # are placed: t[..., None] on [a, b] -> [a, b, 1].
            fill = max(self.rank() - (len(real) - 1), 0)
            pos = next(i for i, it in enumerate(items) if it is Ellipsis)
            items = items[:pos] + (slice(None),) * fill + items[pos + 1 :]
            real = [it for it in items if it is not None]
        out = self.slice(tuple(real)) if real else self
        sliced = out.dims()
        shape, k = [], 0
        for it in items:
            if it is None:
                shape.append(1)
            else:
                shape.append(sliced[k])
                k += 1
        return out.reshape(shape + sliced[k:])

    def slice_assign(self, items, values):
        """New tensor with `values` written over the slice (self is not modified)."""
        from ._tensor import Tensor

        slices, out_shape = normalize(
            "slice_assign",
            tuple(items) if isinstance(items, list | tuple) else (items,),
            self._p.shape,
        )
        if not isinstance(values, Tensor):
            return self.slice_fill(items, values)
        problems = []
        if values._o.kind is not self._o.kind:
            problems.append(f"values are {values._o.kind.value}, tensor is {self._o.kind.value}")
        if tuple(values._p.shape) != out_shape:
            problems.append(
                f"values shape {list(values._p.shape)} != slice shape {list(out_shape)}"
            )
        if values._d is not self._d:
            problems.append(check.device_mismatch(self, values, ("tensor", "values")))
        if problems:
            raise TensorCheckError("slice_assign", problems)
        return self._like(self._o.slice_assign(self._p, slices, values._p))

    def slice_fill(self, items, value):
        """A copy with the region `items` (slices per dim, as `slice`) set to `value` (Burn's
        `slice_fill`).
        """
        from ._tensor import Tensor

        slices, out_shape = normalize(
            "slice_fill",
            tuple(items) if isinstance(items, list | tuple) else (items,),
            self._p.shape,
        )
        fill = Tensor.full(
            out_shape, check.scalar_for("slice_fill", self, value), self._d, dtype=self.dtype
        )
        return self._like(self._o.slice_assign(self._p, slices, fill._p))

    def __setitem__(self, key, value):
        raise TypeError(
            "Tensors are immutable: use t = t.slice_assign(ranges, values) (Burn) instead of t[...] = v"
        )

    # -- indexing --------------------------------------------------------------------------------------
    def select(self, dim: int, indices):
        """Pick entries along `dim` with 1-D Int indices (torch.index_select)."""
        d = check.dim("select", dim, len(self._p.shape))
        indices = self._indices("select", indices)
        if indices.rank() != 1:
            raise TensorCheckError("select", f"indices must be 1-D, got shape {indices.dims()}")
        check_data.indices_in_range("select", indices, d, self._p.shape[d])
        return self._like(self._o.select(self._p, d, indices._p))

    def select_assign(self, dim: int, indices, values):
        """ADD `values` at the selected positions along `dim` (Burn semantics; torch.index_add).

        Bool tensors accumulate with OR, as Burn.
        """
        from ._tensor import Tensor

        if self._o.kind is Bool and isinstance(values, Tensor) and values._o.kind is Bool:
            return self.int().select_assign(dim, indices, values.int()).greater_elem(0)
        check.numeric("select_assign", self)
        d = check.dim("select_assign", dim, len(self._p.shape))
        indices = self._indices("select_assign", indices)
        expect = list(self._p.shape)
        expect[d] = indices.dims()[0] if indices.rank() == 1 else -1
        if (
            indices.rank() != 1
            or list(values._p.shape) != expect
            or values._o.kind is not self._o.kind
        ):
            raise TensorCheckError(
                "select_assign",
                f"expected 1-D indices and {self._o.kind.value} values of shape {expect}, "
                f"got indices {indices.dims()} and values {values.dims()} ({values._o.kind.value})",
            )
        check_data.indices_in_range("select_assign", indices, d, self._p.shape[d])
        return self._like(self._o.select_assign(self._p, d, indices._p, values._p))

    select_add = select_assign

    def gather(self, dim: int, indices):
        """out[..i..] = self[..indices[..i..]..] along `dim` (torch.gather); indices have self's rank."""
        d = check.dim("gather", dim, len(self._p.shape))
        indices = self._indices("gather", indices)
        si, ss = indices._p.shape, self._p.shape
        if len(si) != len(ss) or any(a != b for j, (a, b) in enumerate(zip(si, ss)) if j != d):
            raise TensorCheckError(
                "gather", f"indices shape {list(si)} must match {list(ss)} except at dim {d}"
            )
        check_data.indices_in_range("gather", indices, d, ss[d])
        return self._like(self._o.gather(d, self._p, indices._p))

    def scatter(self, dim: int, indices, values):
        """ADD `values` into self at `indices` along `dim` (torch.scatter_add, as Burn)."""
        check.numeric("scatter", self)
        d = check.dim("scatter", dim, len(self._p.shape))
        indices = self._indices("scatter", indices)
        if indices._p.shape != values._p.shape or len(indices._p.shape) != len(self._p.shape):
            raise TensorCheckError(
                "scatter",
                f"indices {indices.dims()} and values {values.dims()} must have equal shapes of rank {self.rank()}",
            )
        if values._o.kind is not self._o.kind:
            raise TensorCheckError(
                "scatter", f"values are {values._o.kind.value}, tensor is {self._o.kind.value}"
            )
        check_data.indices_in_range("scatter", indices, d, self._p.shape[d])
        return self._like(self._o.scatter(d, self._p, indices._p, values._p))

    def _indices(self, op, indices):
        from ._tensor import Tensor

        if not isinstance(indices, Tensor):
            indices = Tensor.from_data(
                TensorData(np.asarray(indices, dtype=np.int64)), self._d, self._d.backend.int_dtype
            )
        check.int_indices(op, indices)
        check.same_device(op, self, indices)
        return indices

    def mask_where(self, mask, values):
        """`values` where mask is true, else self (torch.where(mask, values, self))."""
        check.mask("mask_where", self, mask)
        check.binary("mask_where", self, values)
        return self._like(self._o.mask_where(self._p, mask._p, values._p))

    def mask_fill(self, mask, value):
        """`value` where the Bool `mask` is true, self elsewhere (Burn's `mask_fill`); the mask has
        self's shape.
        """
        check.mask("mask_fill", self, mask)
        return self._like(
            self._o.mask_fill(self._p, mask._p, check.scalar_for("mask_fill", self, value))
        )
