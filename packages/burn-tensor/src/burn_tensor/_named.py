"""Named tensors: `NamedDim` and `NamedTensor` (Burn's `burn::tensor::{NamedDim, NamedTensor}`).

Burn checks dimension names at compile time (`NamedTensor<B, (Batch, SeqLength, DModel)>`); here
the names travel with the tensor and every op checks them when it runs, raising
`TensorCheckError` with both name lists where Burn's compiler would refuse the program (Burn's
`named-tensor` example: `weights.matmul(input)` and `output.mul(weights)` do not compile there,
and raise here).

Example:
    >>> from burn_ndarray import NdArray
    >>> from burn_tensor import Distribution
    >>> Batch, SeqLength, DModel = NamedDim("Batch"), NamedDim("SeqLength"), NamedDim("DModel")
    >>> dev = NdArray().device()
    >>> w = NamedTensor.random([1, 4, 4], Distribution.default(), dev, (Batch, DModel, DModel))
    >>> x = NamedTensor.random([2, 3, 4], Distribution.default(), dev, (Batch, SeqLength, DModel))
    >>> y = x.matmul(w).mul(x)
    >>> str(y.swap_dims(1, 2))
    'NamedTensor[shape=[2, 4, 3], dims=[Batch, DModel, SeqLength]]'
"""

from __future__ import annotations

from ._errors import TensorCheckError


class NamedDim:
    """A dimension name (Burn's `NamedDim!(Batch)`): `Batch = NamedDim("Batch")`.

    Two NamedDims are the same dim when their names are equal.
    """

    __slots__ = ("name",)

    def __init__(self, name: str):
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"NamedDim: the name must be an identifier, got {name!r}")
        object.__setattr__(self, "name", name)

    def __setattr__(self, key, value):
        raise AttributeError("NamedDim is immutable")

    def __eq__(self, other) -> bool:
        return isinstance(other, NamedDim) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("NamedDim", self.name))

    def __repr__(self) -> str:
        return self.name


def _names(dims) -> str:
    return "[" + ", ".join(d.name for d in dims) + "]"


def _dims(op: str, dims) -> tuple:
    dims = tuple(dims)
    bad = [d for d in dims if not isinstance(d, NamedDim)]
    if bad:
        raise TensorCheckError(op, f"dims must be NamedDim values, got {bad!r}")
    return dims


class NamedTensor:
    """A tensor whose dims carry names (Burn's `NamedTensor`), ranks 1 to 4 as Burn.

    Args:
        tensor: the tensor (any kind).
        dims: one `NamedDim` per dim.
    """

    __slots__ = ("dims", "tensor")

    def __init__(self, tensor, dims):
        from ._tensor import Tensor

        op = "NamedTensor"
        if not isinstance(tensor, Tensor):
            raise TensorCheckError(op, f"expected a Tensor, got {type(tensor).__name__}")
        dims = _dims(op, dims)
        if not 1 <= len(dims) <= 4:
            raise TensorCheckError(op, f"named tensors have 1 to 4 dims (Burn), got {len(dims)}")
        if len(dims) != tensor.rank():
            raise TensorCheckError(
                op, f"{len(dims)} names {_names(dims)} for a rank-{tensor.rank()} tensor"
            )
        object.__setattr__(self, "tensor", tensor)
        object.__setattr__(self, "dims", dims)

    def __setattr__(self, key, value):
        raise AttributeError("NamedTensor is immutable")

    @staticmethod
    def from_tensor(tensor, dims) -> NamedTensor:
        """Name the dims of `tensor`."""
        return NamedTensor(tensor, dims)

    @staticmethod
    def random(shape, distribution, device, dims) -> NamedTensor:
        """A random Float tensor of `shape` with named dims (Burn's `NamedTensor::random`)."""
        from ._tensor import Tensor

        return NamedTensor(Tensor.random(shape, distribution, device), dims)

    def into_tensor(self):
        """The unnamed tensor (Burn's `Tensor::from(named)`)."""
        return self.tensor

    def shape(self):
        """The tensor's shape."""
        return self.tensor.shape

    def mul(self, rhs: NamedTensor) -> NamedTensor:
        """Elementwise product of tensors with the same dim names (sizes broadcast)."""
        self._same("mul", rhs)
        return NamedTensor(self.tensor.mul(rhs.tensor), self.dims)

    __mul__ = mul

    def matmul(self, rhs: NamedTensor) -> NamedTensor:
        """Matrix product: [.., X, Y] @ [.., Y, Z] -> [.., X, Z]; the leading (batch) names and
        the contracted name Y must match (Burn's `Matmul` impls for ranks 2 to 4)."""
        op = "matmul"
        if not isinstance(rhs, NamedTensor):
            raise TensorCheckError(op, f"expected a NamedTensor, got {type(rhs).__name__}")
        a, b = self.dims, rhs.dims
        if len(a) < 2 or len(a) != len(b) or a[:-2] != b[:-2] or a[-1] != b[-2]:
            raise TensorCheckError(
                op,
                f"dims {_names(a)} @ {_names(b)}: expected [.., X, Y] @ [.., Y, Z] with the "
                "same batch names",
            )
        return NamedTensor(self.tensor.matmul(rhs.tensor), a[:-1] + b[-1:])

    __matmul__ = matmul

    def swap_dims(self, dim1: int, dim2: int) -> NamedTensor:
        """Swap two dims and their names (Burn's `swap_dims::<_, D1, D2>()`)."""
        t = self.tensor.swap_dims(dim1, dim2)
        names = list(self.dims)
        n = len(names)
        i, j = dim1 % n, dim2 % n
        names[i], names[j] = names[j], names[i]
        return NamedTensor(t, names)

    def reshape(self, shape, dims) -> NamedTensor:
        """Reshape and rename (Burn's `reshape(shape, dims)`)."""
        return NamedTensor(self.tensor.reshape(shape), dims)

    def _same(self, op: str, rhs) -> None:
        if not isinstance(rhs, NamedTensor):
            raise TensorCheckError(op, f"expected a NamedTensor, got {type(rhs).__name__}")
        if rhs.dims != self.dims:
            raise TensorCheckError(
                op, f"dim names differ: {_names(self.dims)} and {_names(rhs.dims)}"
            )

    def __str__(self) -> str:
        return f"NamedTensor[shape={list(self.tensor.shape)}, dims={_names(self.dims)}]"

    __repr__ = __str__
