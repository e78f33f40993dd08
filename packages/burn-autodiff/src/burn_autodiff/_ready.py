"""`grad_ready(tensors, callback)`: be told each watched leaf's gradient the moment the backward
pass has finished it, while the pass goes on (torch's per-parameter "gradient ready" hooks).

A leaf's gradient is final when the pass reaches the leaf: every node using it has run before
it (reverse topological order). A data-parallel step uses this to start reducing a bucket of
gradients while the pass is still computing the earlier layers' (`burn_train`'s bucket reducer).

The watch is per thread (each rank of a `ThreadedDataParallel` is a thread) and lasts for the
`with` block. The gradients also stay in backward()'s result as usual.

Example:
    >>> from burn_ndarray import NdArray
    >>> from burn_autodiff import Autodiff, grad_ready
    >>> from burn_tensor import Tensor
    >>> d = Autodiff(NdArray()).device()
    >>> w1 = Tensor.from_data([1.0, 2.0], d).require_grad()
    >>> w2 = Tensor.from_data([3.0, 4.0], d).require_grad()
    >>> seen = []
    >>> with grad_ready([w1, w2], lambda i, g: seen.append((i, g.tolist()))):
    ...     _ = ((w1 * 2.0) * w2).sum().backward()
    >>> sorted(seen)
    [(0, [6.0, 8.0]), (1, [2.0, 4.0])]
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

_LOCAL = threading.local()


class _Watch:
    __slots__ = ("callback", "tensors", "where")

    def __init__(self, tensors: Sequence[Any], callback: Callable[[int, Any], None]) -> None:
        self.tensors = list(tensors)
        self.callback = callback
        self.where: dict[int, int] = {}  # leaf node id -> index in `tensors`
        for i, t in enumerate(self.tensors):
            node = getattr(t.into_primitive(), "node", None)
            if node is not None:
                self.where[node.id] = i

    def fire(self, node_id: int, grad: Any) -> None:
        i = self.where.get(node_id)
        if i is None:
            return
        from burn_tensor import Float, Tensor

        self.callback(i, Tensor.from_primitive(grad, Float, self.tensors[i].device.inner()))


def current() -> _Watch | None:
    """This thread's watch, or None (read once per backward pass)."""
    return getattr(_LOCAL, "watch", None)


@contextmanager
def grad_ready(tensors: Sequence[Any], callback: Callable[[int, Any], None]) -> Iterator[None]:
    """Within the block, `callback(i, grad)` runs (on this thread, inside backward()) as soon as
    `tensors[i]`'s gradient is final; `grad` is an inner-backend tensor. Tensors that are not
    tracked leaves, or that the pass does not reach, are never reported.

    Raises:
        TypeError: an element of `tensors` is not a tensor on an Autodiff device.
    """
    for i, t in enumerate(tensors):
        backend = getattr(getattr(t, "device", None), "backend", None)
        if backend is None or not backend.is_autodiff:
            raise TypeError(
                f"grad_ready: tensors[{i}] is {type(t).__name__} on "
                f"{getattr(t, 'device', None)!r}, not a tensor on an Autodiff device"
            )
    previous = current()
    _LOCAL.watch = _Watch(tensors, callback)
    try:
        yield
    finally:
        _LOCAL.watch = previous
