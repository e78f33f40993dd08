"""`ProcessGroup`: collectives across processes (one per device), over TCP.

Rank 0 listens on `BURN_MASTER_ADDR:BURN_MASTER_PORT`; every other rank connects to it and
says its rank. Collectives are a star through rank 0: it receives every rank's array, combines
them in rank order (so all ranks get bitwise the same result) and sends the result back. This is
the CPU path (and what carries NCCL's unique id on GPUs, see `NcclGroup`); its bandwidth is that
of one socket, enough for tests and CPU training of small models.

Example (world size 1: the group is just this process):
    >>> from burn_ndarray import NdArray
    >>> from burn_tensor import Tensor
    >>> comm = ProcessGroup.connect(0, 1, "127.0.0.1", 0)
    >>> comm.all_reduce(Tensor.from_floats([1.0, 2.0], NdArray().device(0))).to_data().to_vec()
    [1.0, 2.0]
    >>> comm.close()
"""

from __future__ import annotations

import socket
import time
from typing import Any

import numpy as np

from . import _wire
from ._errors import CollectiveError

DEFAULT_TIMEOUT = 600.0


class ProcessGroup:
    """This process's communicator: rank `rank` of `world_size` processes."""

    def __init__(self, rank: int, world_size: int, peers: dict[int, socket.socket], server):
        self.rank = rank
        self.world_size = world_size
        self._peers = peers  # rank 0: every other rank's socket; others: {0: socket}
        self._server = server

    @classmethod
    def connect(
        cls, rank: int, world_size: int, addr: str, port: int, timeout: float = DEFAULT_TIMEOUT
    ) -> ProcessGroup:
        """Join the group: rank 0 listens (port 0: any free port), the others connect."""
        if world_size < 1 or not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} is not in a group of {world_size} processes")
        if rank == 0:
            server = socket.create_server((addr, port), reuse_port=False)
            server.settimeout(timeout)
            peers: dict[int, socket.socket] = {}
            while len(peers) < world_size - 1:
                try:
                    sock, _ = server.accept()
                except TimeoutError:
                    missing = sorted(set(range(1, world_size)) - set(peers))
                    server.close()
                    raise CollectiveError(
                        f"rendezvous at {addr}:{port}: ranks {missing} did not join within "
                        f"{timeout} s"
                    ) from None
                sock.settimeout(timeout)
                _no_delay(sock)
                header, _ = _wire.recv(sock, "a joining rank")
                r = header.get("rank")
                if not isinstance(r, int) or not 0 < r < world_size or r in peers:
                    sock.close()
                    raise CollectiveError(f"rendezvous: a peer claimed rank {r!r}")
                if header.get("world_size") != world_size:
                    sock.close()
                    raise CollectiveError(
                        f"rendezvous: rank {r} says world size {header.get('world_size')}, "
                        f"rank 0 says {world_size}"
                    )
                peers[r] = sock
            for sock in peers.values():
                _wire.send(sock, {"ready": True})
            return cls(0, world_size, peers, server)
        sock = _dial(addr, port, timeout, rank)
        sock.settimeout(timeout)
        _no_delay(sock)
        _wire.send(sock, {"rank": rank, "world_size": world_size})
        _wire.recv(sock, "rank 0")
        return cls(rank, world_size, {0: sock}, None)

    @property
    def port(self) -> int:
        """The port rank 0 listens on (useful with port 0)."""
        return self._server.getsockname()[1] if self._server is not None else -1

    # -- collectives on numpy arrays ------------------------------------------------------------

    def _gather0(self, a: np.ndarray | None, op: str) -> list[np.ndarray] | None:
        """Rank 0: every rank's array in rank order; others send theirs and get None."""
        if self.rank != 0:
            if a is not None:
                _wire.send(self._peers[0], {"op": op, **_wire.array_header(a)}, _bytes(a))
            return None
        parts = [a]
        for r in range(1, self.world_size):
            header, payload = _wire.recv(self._peers[r], f"rank {r}")
            if header.get("op") != op:
                raise CollectiveError(
                    f"{op} on rank 0: rank {r} called {header.get('op')!r} instead; every rank "
                    "must call the same collectives in the same order"
                )
            parts.append(_wire.to_array(header, payload, f"rank {r}"))
        return parts

    def _scatter0(self, a: np.ndarray | None, op: str) -> np.ndarray:
        """Rank 0 sends `a` to every rank; the others receive it."""
        if self.rank == 0:
            assert a is not None
            for r in range(1, self.world_size):
                _wire.send(self._peers[r], {"op": op, **_wire.array_header(a)}, _bytes(a))
            return a
        header, payload = _wire.recv(self._peers[0], "rank 0")
        if "error" in header:
            raise CollectiveError(f"{op}: {header['error']}")
        return _wire.to_array(header, payload, "rank 0")

    def _fail(self, message: str) -> None:
        """Rank 0: tell every rank why the collective failed, then raise."""
        for r in range(1, self.world_size):
            try:
                _wire.send(self._peers[r], {"error": message})
            except OSError:
                pass
        raise CollectiveError(message)

    def all_reduce_array(self, a: np.ndarray, op: str = "sum") -> np.ndarray:
        parts = self._gather0(a, "all_reduce")
        out = None
        if parts is not None:
            _same(parts, "all_reduce", self)
            out = parts[0].copy()
            for p in parts[1:]:
                out += p
            if op == "mean":
                out = (out / self.world_size).astype(a.dtype, copy=False)
        return self._scatter0(out, "all_reduce")

    def broadcast_array(self, a: np.ndarray, root: int = 0) -> np.ndarray:
        if root != 0:  # through rank 0: the star has no other edges
            if self.rank == root:
                _wire.send(self._peers[0], {"op": "broadcast", **_wire.array_header(a)}, _bytes(a))
            elif self.rank == 0:
                header, payload = _wire.recv(self._peers[root], f"rank {root}")
                a = _wire.to_array(header, payload, f"rank {root}")
        return self._scatter0(a if self.rank == 0 else None, "broadcast")

    def all_gather_arrays(self, a: np.ndarray) -> list[np.ndarray]:
        parts = self._gather0(a, "all_gather")
        stacked = None
        if parts is not None:
            _same(parts, "all_gather", self)
            stacked = np.stack(parts)
        return list(self._scatter0(stacked, "all_gather"))

    # -- on tensors -----------------------------------------------------------------------------

    def all_reduce(self, tensor: Any, op: str = "sum") -> Any:
        return _like(tensor, self.all_reduce_array(_host(tensor), op))

    def broadcast(self, tensor: Any, root: int = 0) -> Any:
        return _like(tensor, self.broadcast_array(_host(tensor), root))

    def all_gather(self, tensor: Any) -> list[Any]:
        return [_like(tensor, a) for a in self.all_gather_arrays(_host(tensor))]

    def barrier(self) -> None:
        self.all_reduce_array(np.zeros(1, np.int64))

    def close(self) -> None:
        for sock in self._peers.values():
            sock.close()
        self._peers = {}
        if self._server is not None:
            self._server.close()
            self._server = None

    def __repr__(self) -> str:
        return f"ProcessGroup(rank={self.rank}, world_size={self.world_size})"


def _no_delay(sock: socket.socket) -> None:
    # Collectives are request/response exchanges of small messages: with Nagle's algorithm each
    # one waited for a delayed ACK (~40 ms), which made 2-GPU training 45x slower than 1 GPU.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _dial(addr: str, port: int, timeout: float, rank: int) -> socket.socket:
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        try:
            return socket.create_connection((addr, port), timeout=min(timeout, 10.0))
        except OSError as err:
            if time.monotonic() > deadline:
                raise CollectiveError(
                    f"rank {rank}: could not reach rank 0 at {addr}:{port} within {timeout} s "
                    f"({err})"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 1.0)


def _bytes(a: np.ndarray) -> memoryview:
    return memoryview(np.ascontiguousarray(a)).cast("B")


def _host(tensor: Any) -> np.ndarray:
    return np.asarray(tensor.to_data().numpy())


def _like(tensor: Any, a: np.ndarray) -> Any:
    from burn_tensor import Tensor

    return Tensor.from_data(np.array(a), tensor.device, tensor.dtype)


def _same(parts: list[np.ndarray], op: str, comm: ProcessGroup) -> None:
    first = parts[0]
    for r, p in enumerate(parts[1:], 1):
        if p.shape != first.shape or p.dtype != first.dtype:
            comm._fail(
                f"{op}: rank 0 gave {first.dtype} {list(first.shape)}, rank {r} gave {p.dtype} "
                f"{list(p.shape)}; every rank must pass the same shape and dtype"
            )
