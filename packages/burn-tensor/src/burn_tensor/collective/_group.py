"""The communicator interface every group implements, and the module-level functions.

A *group* is the set of participants (devices of one process, or processes); a *communicator*
is one participant's handle, used from that participant's thread or process. Collectives are
called by every rank of the group, in the same order, with tensors of the same shape and dtype.

Example (two NdArray devices of one process, one thread each):
    >>> import threading
    >>> from burn_ndarray import NdArray
    >>> from burn_tensor import Tensor
    >>> from burn_tensor.collective import ThreadGroup, all_reduce
    >>> devices = [NdArray(num_devices=2).device(0), NdArray(num_devices=2).device(1)]
    >>> group = ThreadGroup(devices)
    >>> out = [None, None]
    >>> def run(rank):
    ...     t = Tensor.from_floats([1.0 + rank, 2.0], devices[rank])
    ...     out[rank] = all_reduce(t, group.communicator(rank), "sum")
    >>> threads = [threading.Thread(target=run, args=(r,)) for r in range(2)]
    >>> for t in threads: t.start()
    >>> for t in threads: t.join()
    >>> out[0].to_data().to_vec(), out[1].device == devices[1]
    ([3.0, 4.0], True)
"""

from __future__ import annotations

from typing import Any, Protocol

OPS = ("sum", "mean")


class Communicator(Protocol):
    """One rank's handle on a group."""

    rank: int
    world_size: int

    def all_reduce(self, tensor: Any, op: str = "sum") -> Any: ...

    def broadcast(self, tensor: Any, root: int = 0) -> Any: ...

    def all_gather(self, tensor: Any) -> list[Any]: ...

    def barrier(self) -> None: ...


def check_op(op: str) -> str:
    if op not in OPS:
        raise ValueError(f"all_reduce: op must be one of {OPS}, got {op!r}")
    return op


def broadcast(tensor: Any, comm: Communicator, root: int = 0) -> Any:
    """Rank `root`'s tensor, on every rank's device (other ranks' `tensor` gives shape/dtype)."""
    if not 0 <= root < comm.world_size:
        raise ValueError(f"broadcast: root {root} is not a rank of a group of {comm.world_size}")
    return comm.broadcast(tensor, root)


def all_gather(tensor: Any, comm: Communicator) -> list[Any]:
    """Every rank's tensor, in rank order, each on the calling rank's device."""
    return comm.all_gather(tensor)
