"""`Transaction`: read several tensors with one synchronisation (Burn's `Transaction`)."""

from __future__ import annotations

from ._data import TensorData
from ._dtype import Bool, Float
from ._errors import TensorCheckError


class Transaction:
    """Collects tensors, then reads them all at once (Burn's `Transaction`).

    Each backend reads its tensors through one `tr_execute` call: the default reads them one by
    one; GPU backends wait for the queue once and copy everything to the host in one transfer,
    instead of one blocking read per tensor. Tensors of several backends are allowed (one call
    per backend); the datas come back in registration order.

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_tensor import Tensor
        >>> dev = NdArray().device()
        >>> a, b = Tensor.ones([2], dev), Tensor.arange(3, dev)
        >>> [d.tolist() for d in Transaction().register(a).register(b).execute()]
        [[1.0, 1.0], [0, 1, 2]]
    """

    __slots__ = ("_tensors",)

    def __init__(self) -> None:
        self._tensors: list = []

    def register(self, tensor) -> Transaction:
        """Add a tensor to read (any kind); returns the transaction, for chaining."""
        from ._tensor import Tensor

        if not isinstance(tensor, Tensor):
            raise TensorCheckError(
                "Transaction.register", f"expected a Tensor, got {type(tensor).__name__}"
            )
        self._tensors.append(tensor)
        return self

    def __len__(self) -> int:
        return len(self._tensors)

    def execute(self) -> list[TensorData]:
        """Read every registered tensor -> their `TensorData`, in registration order."""
        groups: dict = {}
        for i, t in enumerate(self._tensors):
            groups.setdefault(t._d.backend, []).append((i, t))
        out: list = [None] * len(self._tensors)
        for backend, items in groups.items():
            parts: tuple = ([], [], [])
            slots: tuple = ([], [], [])
            for i, t in items:
                k = 0 if t._o.kind is Float else 2 if t._o.kind is Bool else 1
                parts[k].append(t._p)
                slots[k].append(i)
            datas = backend.tr_execute(*parts)
            for k in range(3):
                if len(datas[k]) != len(slots[k]):
                    raise RuntimeError(
                        f"{backend!r}.tr_execute returned {len(datas[k])} datas for "
                        f"{len(slots[k])} tensors"
                    )
                for i, d in zip(slots[k], datas[k]):
                    out[i] = d
        return out

    #: Burn's fallible form; errors are exceptions here, so it is `execute`.
    try_execute = execute
