"""`ThreadGroup`: collectives across devices of one process, one thread per device.

Each rank deposits its tensor in a slot and waits at a barrier; every rank then reads all slots
in rank order, moves them to its own device and combines them there, and waits again before
the slots are reused. Every rank computes the same sum in the same order on the same kind of
backend, so the results are bitwise equal on every rank (what keeps data-parallel replicas
identical). A rank that fails calls `abort()`: the others get a CollectiveError at once instead
of waiting forever.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from ._errors import CollectiveError
from ._group import check_op

# Seconds a rank waits for the others at one collective before it gives up.
DEFAULT_TIMEOUT = 600.0


class ThreadGroup:
    """The devices of one process; `communicator(rank)` is rank `rank`'s handle.

    Args:
        devices: one device per rank (several devices of one backend, e.g. `NdArray().device(i)`).
        timeout: seconds one collective may wait for the other ranks.
    """

    def __init__(self, devices: Sequence[Any], timeout: float = DEFAULT_TIMEOUT) -> None:
        self.devices = list(devices)
        if not self.devices:
            raise ValueError("ThreadGroup needs at least one device")
        self.world_size = len(self.devices)
        self._barrier = threading.Barrier(self.world_size, timeout=timeout)
        self._slots: list[Any] = [None] * self.world_size
        self._failed: str | None = None

    def communicator(self, rank: int) -> ThreadCommunicator:
        if not 0 <= rank < self.world_size:
            raise ValueError(f"rank {rank} is not in a group of {self.world_size}")
        return ThreadCommunicator(self, rank)

    def abort(self, reason: str) -> None:
        """Release every waiting rank with a CollectiveError naming `reason`."""
        self._failed = reason
        self._barrier.abort()

    def _wait(self, rank: int, op: str) -> None:
        try:
            self._barrier.wait()
        except threading.BrokenBarrierError:
            why = self._failed or "another rank timed out or left"
            raise CollectiveError(
                f"{op} on rank {rank} of a ThreadGroup of {self.world_size}: {why}"
            ) from None

    def __repr__(self) -> str:
        return f"ThreadGroup({self.devices!r})"


class ThreadCommunicator:
    """Rank `rank` of a `ThreadGroup`; use it from that rank's thread only."""

    def __init__(self, group: ThreadGroup, rank: int) -> None:
        self.group = group
        self.rank = rank
        self.world_size = group.world_size
        self.device = group.devices[rank]

    def _exchange(self, tensor: Any, op: str) -> list[Any]:
        g = self.group
        g._slots[self.rank] = tensor
        g._wait(self.rank, op)
        parts = list(g._slots)
        _check_same(parts, op, self.rank)
        return parts

    def _done(self, op: str) -> None:
        self.group._wait(self.rank, op)  # nobody overwrites a slot another rank still reads

    def all_reduce(self, tensor: Any, op: str = "sum") -> Any:
        check_op(op)  # before the exchange: an unknown op must not be summed silently
        parts = self._exchange(tensor, "all_reduce")
        here = tensor.device  # the caller's device (its rank's, or that device's inner one)
        total = parts[0].to_device(here)
        for p in parts[1:]:
            total = total + p.to_device(here)
        self._done("all_reduce")
        return total / self.world_size if op == "mean" else total

    def broadcast(self, tensor: Any, root: int = 0) -> Any:
        parts = self._exchange(tensor, "broadcast")
        out = parts[root].to_device(tensor.device)
        self._done("broadcast")
        return out

    def all_gather(self, tensor: Any) -> list[Any]:
        parts = self._exchange(tensor, "all_gather")
        out = [p.to_device(tensor.device) for p in parts]
        self._done("all_gather")
        return out

    def barrier(self) -> None:
        self.group._wait(self.rank, "barrier")

    def __repr__(self) -> str:
        return f"ThreadCommunicator(rank={self.rank}, world_size={self.world_size})"


def _check_same(parts: list[Any], op: str, rank: int) -> None:
    first = parts[0]
    for r, p in enumerate(parts[1:], 1):
        if list(p.shape) != list(first.shape) or p.dtype != first.dtype:
            raise CollectiveError(
                f"{op} on rank {rank}: rank 0 gave {first.dtype.value} {list(first.shape)}, rank "
                f"{r} gave {p.dtype.value} {list(p.shape)}; every rank must pass the same shape "
                "and dtype"
            )
