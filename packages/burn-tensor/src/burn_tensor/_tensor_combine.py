"""Combining and splitting tensors along a dim (`cat`, `stack`, `narrow`, `chunk`, `split`,
iteration) and padding their last dims: the part of `Tensor` that changes extents, not layout."""

from __future__ import annotations

from . import _check as check
from ._errors import TensorCheckError


class CombineMixin:
    """`cat`/`stack` of several tensors, the pieces of one (`narrow`, `split`, ...), `pad`."""

    __slots__ = ()

    @staticmethod
    def cat(tensors, dim: int):
        """Concatenate along an existing dim. Shapes: [.., a, ..] + [.., b, ..] -> [.., a+b, ..]"""
        tensors = list(tensors)
        if not tensors:
            raise TensorCheckError("cat", "expected at least one tensor")
        first = tensors[0]
        rank = len(first._p.shape)
        d = check.dim("cat", dim, rank)
        _check_alike("cat", tensors, d)
        if len(tensors) == 1:
            return first
        return first._like(first._o.cat([t._p for t in tensors], d))

    @staticmethod
    def stack(tensors, dim: int):
        """Stack along a new dim. Shapes: k x [d...] -> [.., k, ..]

        One backend `cat` of the inputs reshaped to a size-1 dim at `dim` (ShuffleNet's channel
        shuffle runs 16 stacks a forward: tensor-level unsqueezes and a second round of cat's
        checks cost ~40% of each on NdArray).
        """
        tensors = list(tensors)
        if not tensors:
            raise TensorCheckError("stack", "expected at least one tensor")
        first = tensors[0]
        shape = first._p.shape
        d = check.dim("stack", dim, len(shape) + 1)
        _check_alike("stack", tensors, None)
        ops = first._o
        grown = shape[:d] + (1,) + shape[d:]
        if len(tensors) == 1:
            return first._like(ops.reshape(first._p, grown))
        return first._like(ops.cat([ops.reshape(t._p, grown) for t in tensors], d))

    def narrow(self, dim: int, start: int, length: int):
        """The `length` elements from `start` along `dim` (Burn's `narrow`): [5, 3].narrow(0, 1, 2)
        -> [2, 3].
        """
        shape = self._p.shape
        d = check.dim("narrow", dim, len(shape))
        if start < 0:
            start += shape[d]
        if start < 0 or length < 0 or start + length > shape[d]:
            raise TensorCheckError(
                "narrow",
                f"start {start} + length {length} out of range for dim {d} of size {shape[d]}",
            )
        # the slices `normalize` gives, built directly (shufflenet narrows 26 times a forward)
        items = tuple(slice(start, start + length, 1) if i == d else slice(0, n, 1)
                      for i, n in enumerate(shape))  # fmt: skip
        return self._like(self._o.slice(self._p, items))

    def chunk(self, chunks: int, dim: int) -> list:
        """Split into up to `chunks` pieces of ceil(n / chunks) (torch.chunk)."""
        if chunks <= 0:
            raise TensorCheckError("chunk", f"chunks must be > 0, got {chunks}")
        d = check.dim("chunk", dim, len(self._p.shape))
        n = self._p.shape[d]
        size = max(1, -(-n // chunks))
        return self.split(size, d)

    def split(self, split_size: int, dim: int = 0) -> list:
        """Splits along `dim` into chunks of `split_size` (the last may be smaller) (Burn's
        `split`).
        """
        if split_size <= 0:
            raise TensorCheckError("split", f"split_size must be > 0, got {split_size}")
        d = check.dim("split", dim, len(self._p.shape))
        n = self._p.shape[d]
        return [self.narrow(d, s, min(split_size, n - s)) for s in range(0, n, split_size)] or [
            self
        ]

    def split_with_sizes(self, sizes, dim: int = 0) -> list:
        """Splits along `dim` into chunks of the given `sizes`, which must sum to the dim (Burn's
        `split_with_sizes`).
        """
        d = check.dim("split_with_sizes", dim, len(self._p.shape))
        if sum(sizes) != self._p.shape[d] or any(s < 0 for s in sizes):
            raise TensorCheckError(
                "split_with_sizes", f"sizes {list(sizes)} do not sum to {self._p.shape[d]}"
            )
        out, start = [], 0
        for s in sizes:
            out.append(self.narrow(d, start, s))
            start += s
        return out

    def iter_dim(self, dim: int):
        """Yield size-1 slices along `dim` (rank kept, as Burn)."""
        d = check.dim("iter_dim", dim, len(self._p.shape))
        for i in range(self._p.shape[d]):
            yield self.narrow(d, i, 1)

    def __iter__(self):
        return self.iter_dim(0)

    def pad(self, pads, mode=0):
        """Pad the last dims (Burn's `pad`, torch's `F.pad`).

        Args:
            pads: `(left, right)`, `(left, right, top, bottom)`, ...: pairs from the last dim
                backwards (Burn's 4-tuple is the last two dims).
            mode: a number (constant padding with it, the default 0), a `PadMode`
                (`PadMode.Constant(v)`, `PadMode.Reflect`, `PadMode.Edge`) or a name
                ("constant", "reflect", "edge"). Reflect mirrors without repeating the edge
                and needs each pad smaller than its dim; edge repeats the edge value.

        Example:
            >>> from burn_ndarray import NdArray
            >>> from burn_tensor import Tensor
            >>> t = Tensor.from_data([[1, 2, 3]], NdArray().device())
            >>> t.pad((2, 1), "reflect").tolist(), t.pad((1, 1), "edge").tolist()
            ([[3, 2, 1, 2, 3, 2]], [[1, 1, 2, 3, 3]])
        """
        from ._pad_mode import PAD_MODES, PadMode

        check.numeric("pad", self)
        if isinstance(mode, PadMode):
            kind, value = mode.mode, mode.value
        elif isinstance(mode, str):
            if mode not in PAD_MODES:
                raise TensorCheckError("pad", f"mode must be one of {PAD_MODES}, got {mode!r}")
            kind, value = mode, 0
        else:
            kind, value = "constant", mode
        pads = list(pads)
        if len(pads) % 2 or len(pads) // 2 > self.rank():
            raise TensorCheckError(
                "pad", f"pads {pads} must be pairs for at most {self.rank()} dims"
            )
        if any(p < 0 for p in pads):
            raise TensorCheckError("pad", f"negative padding {pads} is not supported")
        shape = self._p.shape
        per_dim = [(0, 0)] * len(shape)
        for i in range(len(pads) // 2):
            d = len(shape) - 1 - i
            per_dim[d] = (int(pads[2 * i]), int(pads[2 * i + 1]))
            if kind == "reflect" and max(per_dim[d]) >= shape[d]:
                raise TensorCheckError(
                    "pad",
                    f"reflect padding {per_dim[d]} of dim {d} must be smaller than its size "
                    f"{shape[d]}",
                )
            if kind == "edge" and shape[d] == 0 and max(per_dim[d]) > 0:
                raise TensorCheckError("pad", f"edge padding of dim {d}, which is empty")
        v = check.scalar_for("pad", self, value)
        return self._like(self._o.pad(self._p, tuple(per_dim), kind, v))


def _check_alike(op: str, tensors: list, dim: int | None) -> None:
    """Every tensor of `tensors` of tensor 0's kind, device and shape (off `dim`; all of it when
    None), or one TensorCheckError listing every difference."""
    first = tensors[0]
    shape = first._p.shape
    rank = len(shape)
    problems = []
    for i, t in enumerate(tensors[1:], 1):
        if t._o.kind is not first._o.kind:
            problems.append(f"tensor {i} is {t._o.kind.value}, tensor 0 is {first._o.kind.value}")
        if t._d is not first._d:
            problems.append(check.device_mismatch(t, first, (f"tensor {i}", "tensor 0")))
        s = t._p.shape
        if dim is None:
            if s != shape:
                problems.append(f"tensor {i} shape {list(s)} != {list(shape)}")
        elif len(s) != rank:
            problems.append(f"tensor {i} has rank {len(s)}, tensor 0 has rank {rank}")
        elif any(a != b for j, (a, b) in enumerate(zip(s, shape)) if j != dim):
            problems.append(f"tensor {i} shape {list(s)} differs from {list(shape)} off dim {dim}")
    if problems:
        raise TensorCheckError(op, problems)
