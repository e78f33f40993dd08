"""Shape and layout ops of `Tensor`: reshaping, permuting, repeating, triangles and masks.

Combining, splitting and padding are `_tensor_combine.py`'s.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from . import _check as check
from . import _check_data as check_data
from ._data import TensorData
from ._dtype import Bool, Int
from ._errors import TensorCheckError


class LayoutMixin:
    __slots__ = ()

    # -- reshaping -----------------------------------------------------------------------------------
    def reshape(self, shape, *more):
        """New shape with the same element count; `-1` infers one dim, `0` keeps the input dim.

        `reshape([3, 2])` (Burn) and `reshape(3, 2)` (PyTorch) are the same call.

        Example:
            >>> Tensor.arange(0, 6, device).reshape(3, 2).dims()
            [3, 2]
        """
        if more:
            shape = (shape, *more)
        elif isinstance(shape, int):
            shape = (shape,)
        old = self._p.shape
        dims = _positive_dims(shape)
        if dims is None or math.prod(dims) != math.prod(old):
            dims = _reshape_dims(shape, old)
        if dims == old:
            return self
        return self._like(self._o.reshape(self._p, dims))

    view = reshape

    def flatten(self, start_dim: int = 0, end_dim: int = -1):
        """Merges dims `start_dim..=end_dim` into one (Burn's `flatten(start, end)`): [2, 3, 4] ->
        flatten(1, 2) -> [2, 12].
        """
        shape = self._p.shape
        if not shape:
            return self.reshape((1,))
        a = check.dim("flatten", start_dim, len(shape))
        b = check.dim("flatten", end_dim, len(shape))
        if a > b:
            raise TensorCheckError("flatten", f"start_dim {start_dim} > end_dim {end_dim}")
        dims = shape[:a] + (math.prod(shape[a : b + 1]),) + shape[b + 1 :]
        # the element count holds by construction: no `reshape` checks (ShuffleNet's channel
        # shuffle flattens 16 times a forward)
        return self if dims == shape else self._like(self._o.reshape(self._p, dims))

    def squeeze(self, dim: int | None = None):
        """Remove size-1 dims: all of them (dim=None) or the given one (must have size 1)."""
        if dim is None:
            return self.reshape(tuple(d for d in self._p.shape if d != 1))
        return self.squeeze_dim(dim)

    def squeeze_dim(self, dim: int):
        """Removes `dim`, which must have size 1 (Burn's `squeeze_dim`): [2, 1, 3] -> [2, 3]."""
        shape = self._p.shape
        d = check.dim("squeeze_dim", dim, len(shape))
        if shape[d] != 1:
            raise TensorCheckError("squeeze_dim", f"dim {dim} has size {shape[d]}, expected 1")
        return self.reshape(shape[:d] + shape[d + 1 :])

    def squeeze_dims(self, dims):
        """Removes every dim in `dims`, each of which must have size 1 (Burn's `squeeze_dims`)."""
        shape = self._p.shape
        ds = {check.dim("squeeze_dims", d, len(shape)) for d in dims}
        for d in ds:
            if shape[d] != 1:
                raise TensorCheckError("squeeze_dims", f"dim {d} has size {shape[d]}, expected 1")
        return self.reshape(tuple(s for i, s in enumerate(shape) if i not in ds))

    def unsqueeze(self, rank: int | None = None):
        """Add leading size-1 dims: one (rank=None), or up to `rank` dims (Burn's `unsqueeze::<D2>`).

        The argument is the target RANK, as in Burn, not PyTorch's insert position: that is
        `unsqueeze_dim(dim)`. A rank below the current one is refused, naming `unsqueeze_dim`.
        """
        shape = self._p.shape
        if rank is None:
            return self.reshape((1,) + shape)
        if rank < len(shape):
            raise TensorCheckError(
                "unsqueeze",
                f"target rank {rank} < current rank {len(shape)}: `unsqueeze(rank)` pads leading "
                f"dims up to `rank` (Burn); to insert a size-1 dim at position {rank} as torch's "
                f"`unsqueeze({rank})` does, use `unsqueeze_dim({rank})`",
            )
        return self.reshape((1,) * (rank - len(shape)) + shape)

    def unsqueeze_dim(self, dim: int):
        """Inserts a dim of size 1 at `dim` (Burn's `unsqueeze_dim`; torch's `unsqueeze`): [2,
        3].unsqueeze_dim(0) -> [1, 2, 3].
        """
        shape = self._p.shape
        d = check.dim("unsqueeze_dim", dim, len(shape) + 1)
        return self.reshape(shape[:d] + (1,) + shape[d:])

    def unsqueeze_dims(self, dims):
        """Inserts dims of size 1 at each position of `dims` (negative counts from the end) (Burn's
        `unsqueeze_dims`).
        """
        shape = list(self._p.shape)
        out_rank = len(shape) + len(dims)
        ds = sorted(check.dim("unsqueeze_dims", d, out_rank) for d in dims)
        for d in ds:
            shape.insert(d, 1)
        return self.reshape(tuple(shape))

    def permute(self, axes, *more):
        """Reorder the dims: `permute([2, 0, 1])` (Burn) or `permute(2, 0, 1)` (PyTorch)."""
        if more or isinstance(axes, int):
            axes = (axes, *more)
        rank = len(self._p.shape)
        ax = tuple(check.dim("permute", a, rank) for a in axes)
        if sorted(ax) != list(range(rank)):
            raise TensorCheckError(
                "permute", f"axes {list(axes)} are not a permutation of {rank} dims"
            )
        if ax == tuple(range(rank)):
            return self
        return self._like(self._o.permute(self._p, ax))

    def movedim(self, src, dst):
        """Moves dim(s) `src` to position(s) `dst`, the others keeping their order (Burn's
        `movedim`).
        """
        rank = len(self._p.shape)
        s = check.dim("movedim", src, rank)
        d = check.dim("movedim", dst, rank)
        order = [i for i in range(rank) if i != s]
        order.insert(d, s)
        return self.permute(order)

    def swap_dims(self, dim1: int, dim2: int):
        """Exchanges dims `dim1` and `dim2` (Burn's `swap_dims`; torch's `transpose(d0, d1)`): [2,
        3, 4].swap_dims(0, 2) -> [4, 3, 2].
        """
        rank = len(self._p.shape)
        # plain in-range ints (every call of the attention layers) skip `check.dim`'s two calls
        if type(dim1) is int and type(dim2) is int and 0 <= dim1 < rank and 0 <= dim2 < rank:
            a, b = dim1, dim2
        else:
            a = check.dim("swap_dims", dim1, rank)
            b = check.dim("swap_dims", dim2, rank)
        if a == b:
            return self
        return self._like(self._o.swap_dims(self._p, a, b))

    def transpose(self, dim0: int | None = None, dim1: int | None = None):
        """Swap the last two dims (Burn's `transpose`): [..., m, n] -> [..., n, m].

        With two dims, `transpose(0, 1)` swaps those (PyTorch's form, Burn's `swap_dims`).
        """
        if dim0 is not None or dim1 is not None:
            if dim0 is None or dim1 is None:
                raise TensorCheckError(
                    "transpose",
                    f"got one dim ({dim0 if dim1 is None else dim1}): `transpose()` swaps the last "
                    "two dims; `transpose(dim0, dim1)` / `swap_dims(dim0, dim1)` swap two given dims",
                )
            return self.swap_dims(dim0, dim1)
        if len(self._p.shape) < 2:
            return self
        return self._like(self._o.transpose(self._p))

    t = transpose

    @property
    def T(self):
        """The transpose of the last two dims (Burn's `t.transpose()` as a property, like numpy's
        `.T`).
        """
        return self.transpose()

    def flip(self, axes):
        """Reverses the order of elements along each dim in `axes` (Burn's `flip`); the shape is
        kept.
        """
        rank = len(self._p.shape)
        ax = tuple(check.dim("flip", a, rank) for a in axes)
        if len(set(ax)) != len(ax):
            raise TensorCheckError("flip", f"repeated axes {list(axes)}")
        return self._like(self._o.flip(self._p, ax)) if ax else self

    def expand(self, shape):
        """Broadcast size-1 dims (and add leading dims); -1 keeps a dim."""
        old = self._p.shape
        shape = tuple(shape)
        if len(shape) < len(old):
            raise TensorCheckError(
                "expand", f"cannot expand {list(old)} to fewer dims {list(shape)}"
            )
        lead = len(shape) - len(old)
        out = []
        for i, d in enumerate(shape):
            src = old[i - lead] if i >= lead else None
            if d == -1:
                if src is None:
                    raise TensorCheckError("expand", f"-1 not allowed for new leading dim {i}")
                d = src
            if src is not None and src != d and src != 1:
                raise TensorCheckError("expand", f"dim {i} of size {src} cannot expand to {d}")
            out.append(d)
        out = tuple(out)
        if out == old:
            return self
        return self._like(self._o.expand(self._p, out))

    broadcast_to = expand

    def repeat_dim(self, dim: int, times: int):
        """Repeats the whole tensor `times` times along `dim` (Burn's `repeat_dim`): [2,
        3].repeat_dim(0, 2) -> [4, 3].
        """
        d = check.dim("repeat_dim", dim, len(self._p.shape))
        if times < 0:
            raise TensorCheckError("repeat_dim", f"times must be >= 0, got {times}")
        if times == 1:
            return self
        return self._like(self._o.repeat_dim(self._p, d, times))

    def repeat(self, *args):
        """`repeat(sizes)` repeats each dim (torch.repeat); `repeat(dim, times)` as the first book."""
        if len(args) == 2 and all(isinstance(a, int) for a in args):
            return self.repeat_dim(*args)
        sizes = args[0] if len(args) == 1 else args
        sizes = list(sizes)
        if len(sizes) != len(self._p.shape):
            raise TensorCheckError("repeat", f"{len(sizes)} sizes for a rank-{self.rank()} tensor")
        out = self
        for d, times in enumerate(sizes):
            out = out.repeat_dim(d, times)
        return out

    def roll_dim(self, shift: int, dim: int):
        """Rolls elements by `shift` along one `dim`, wrapping around (Burn's `roll_dim`)."""
        d = check.dim("roll_dim", dim, len(self._p.shape))
        n = self._p.shape[d]
        if n == 0:
            return self
        k = shift % n
        if k == 0:
            return self
        a = self.narrow(d, n - k, k)
        b = self.narrow(d, 0, n - k)
        return type(self).cat([a, b], d)

    def roll(self, shifts, dims):
        """Rolls elements by `shifts[i]` along `dims[i]`, wrapping around (Burn's `roll`); the shape
        is kept.
        """
        out = self
        for s, d in zip(shifts, dims):
            out = out.roll_dim(s, d)
        return out

    # -- triangular ------------------------------------------------------------------------------------
    def tril(self, diagonal: int = 0):
        """Keeps the lower triangle of the last two dims (at and below `diagonal`), zeroes the rest
        (Burn's `tril`).
        """
        check.numeric("tril", self)
        return self.mask_fill(_tri_mask("tril", self, diagonal), 0)

    def triu(self, diagonal: int = 0):
        """Keeps the upper triangle of the last two dims (at and above `diagonal`), zeroes the rest
        (Burn's `triu`).
        """
        check.numeric("triu", self)
        return self.mask_fill(_tri_mask("triu", self, diagonal), 0)

    @staticmethod
    def tril_mask(shape, diagonal: int = 0, device=None):
        """Bool mask, True ABOVE the `diagonal`-th diagonal (the part `tril` zeroes)."""
        return _mask_tensor(shape, device, lambda i, j: j > i + diagonal)

    @staticmethod
    def triu_mask(shape, diagonal: int = 0, device=None):
        """Bool mask, True BELOW the `diagonal`-th diagonal (the part `triu` zeroes)."""
        return _mask_tensor(shape, device, lambda i, j: j < i + diagonal)

    @staticmethod
    def diag_mask(shape, diagonal: int = 0, device=None):
        """Bool mask, True everywhere except the `diagonal`-th diagonal."""
        return _mask_tensor(shape, device, lambda i, j: j != i + diagonal)

    def _one_hot_inst(self, num_classes: int):
        """Int/Float class indices [d...] -> one-hot [d..., num_classes] of the same kind."""
        from ._tensor import Tensor

        check.numeric("one_hot", self)
        # The class dim of the result is the new last dim: name it so.
        check_data.indices_in_range("one_hot", self, self.rank(), num_classes, "class index")
        idx = self.int().unsqueeze_dim(-1)
        zeros = Tensor.zeros(tuple(self._p.shape) + (num_classes,), self._d, dtype=self.dtype)
        ones = Tensor.ones(tuple(self._p.shape) + (1,), self._d, dtype=self.dtype)
        return zeros.scatter(-1, idx, ones)

    def argwhere(self):
        """Indices [n, rank] of the True elements of a Bool tensor."""
        check.kind("argwhere", self, Bool)
        return self._as(self._d.backend.bool_argwhere(self._p), Int)

    def nonzero(self) -> list:
        """For a Bool tensor: one Int tensor [n] per dim, the indices of its n true elements
        (Burn's `nonzero`).
        """
        idx = self.argwhere()
        return [
            idx.slice([slice(None), slice(i, i + 1)]).reshape((-1,)) for i in range(self.rank())
        ]


def _tri_mask(op, t, diagonal):
    from ._tensor import Tensor

    if t.rank() < 2:
        raise TensorCheckError(op, f"expected rank >= 2, got {t.dims()}")
    fn = Tensor.tril_mask if op == "tril" else Tensor.triu_mask
    m = fn(t.dims()[-2:], diagonal, t._d)
    return m.reshape((1,) * (t.rank() - 2) + tuple(t.dims()[-2:]))


def _mask_tensor(shape, device, pred):
    from ._tensor import Tensor

    shape = tuple(shape)
    if len(shape) < 2:
        raise TensorCheckError("tri_mask", f"expected a shape of rank >= 2, got {list(shape)}")
    rows, cols = shape[-2], shape[-1]
    i = np.arange(rows)[:, None]
    j = np.arange(cols)[None, :]
    m = np.broadcast_to(pred(i, j), shape)
    return Tensor.from_data(TensorData(np.ascontiguousarray(m)), device)


def _positive_dims(shape) -> tuple | None:
    """`shape` as a tuple when every dim is a plain int > 0 (no -1 or 0 to resolve), else None:
    the common reshape skips `_reshape_dims`' per-dim `operator.index` and special cases."""
    if not isinstance(shape, tuple | list):
        return None
    for d in shape:
        if type(d) is not int or d <= 0:
            return None
    return tuple(shape)


def _reshape_dims(shape, old: tuple) -> tuple:
    """The dims `reshape(shape)` gives a tensor of shape `old` (-1 inferred, 0 kept), or raise."""
    dims = []
    infer = None
    for i, d in enumerate(shape):
        d = operator.index(d)
        if d == -1:
            if infer is not None:
                raise TensorCheckError("reshape", f"only one -1 allowed in {list(shape)}")
            infer = i
            dims.append(1)
        elif d == 0 and i < len(old):
            dims.append(old[i])
        elif d < 0:
            raise TensorCheckError("reshape", f"invalid dim {d} in {list(shape)}")
        else:
            dims.append(d)
    n = math.prod(old)
    if infer is not None:
        rest = math.prod(dims)
        if rest == 0 or n % rest:
            raise TensorCheckError("reshape", f"cannot infer -1: {list(old)} -> {list(shape)}")
        dims[infer] = n // rest
    if math.prod(dims) != n:
        raise TensorCheckError(
            "reshape", f"{list(old)} has {n} elements, {list(shape)} needs {math.prod(dims)}"
        )
    return tuple(dims)
