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

from . import _rendezvous, _wire
from ._auth import job_token
from ._errors import CollectiveError
from ._group import check_op

DEFAULT_TIMEOUT = 600.0


class ProcessGroup:
    """This process's communicator: rank `rank` of `world_size` processes."""

    def __init__(
        self,
        rank: int,
        world_size: int,
        peers: dict[int, socket.socket],
        port: int = -1,
        timeout: float = DEFAULT_TIMEOUT,
    ):
        self.rank = rank
        self.world_size = world_size
        self._peers = peers  # rank 0: every other rank's socket; others: {0: socket}
        self._port = port
        self._timeout = timeout  # per message
        self._broken: str | None = None  # why the group failed; a failed group stays failed
        self._runner = None  # the thread of all_reduce_async, started on first use

    @classmethod
    def connect(
        cls,
        rank: int,
        world_size: int,
        addr: str,
        port: int,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        token: str | None = None,
        handshake_timeout: float | None = None,
    ) -> ProcessGroup:
        """Join the group: rank 0 listens (port 0: any free port), the others connect.

        Args:
            timeout: seconds the rendezvous may take, and each later message.
            token: the job's shared secret (default `$BURN_COLLECTIVE_TOKEN`); every rank must
                hold the same one. Required when `world_size > 1`.
            handshake_timeout: seconds one connection has to prove the token (default
                min(10, timeout)); a slower one is dropped and rank 0 keeps accepting.
        """
        if world_size < 1 or not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} is not in a group of {world_size} processes")
        if type(port) is not int or not (0 <= port <= 65535) or (port == 0 and rank != 0):
            raise CollectiveError(
                f"rank {rank}: master port {port!r} is not a TCP port (1..65535; 0 lets rank 0 "
                "pick one)"
            )
        secret = job_token(token, world_size, rank)
        handshake = min(_rendezvous.HANDSHAKE_TIMEOUT, timeout)
        if handshake_timeout is not None:
            handshake = handshake_timeout
        if rank != 0:
            assert secret is not None
            sock = _rendezvous.join(addr, port, rank, world_size, secret, timeout, handshake)
            return cls(rank, world_size, {0: sock}, -1, timeout)
        try:
            server = socket.create_server((addr, port), reuse_port=False)
        except OSError as err:
            raise CollectiveError(
                f"rank 0 could not listen on {addr}:{port} ({err}): another process holds the "
                "port, or the address is not this host's"
            ) from None
        try:
            where = f"{addr}:{server.getsockname()[1]}"
            peers = _rendezvous.serve(server, world_size, secret, timeout, handshake, where)
            bound = server.getsockname()[1]
        finally:
            # Nobody joins after the rendezvous: stop listening, so nothing can queue up.
            server.close()
        for sock in peers.values():
            _rendezvous.no_delay(sock)
        return cls(0, world_size, peers, bound, timeout)

    @property
    def port(self) -> int:
        """The port rank 0 listened on (useful with port 0); -1 on other ranks."""
        return self._port

    # -- framing with checks ---------------------------------------------------------------------

    def _deadline(self) -> float:
        return time.monotonic() + self._timeout

    def _send(self, r: int, header: dict, a: np.ndarray | None = None) -> None:
        payload = _bytes(a) if a is not None else b""
        header = {**header, **_wire.array_header(a)} if a is not None else header
        _wire.send(self._peers[r], header, payload, f"rank {r}", self._deadline())

    def _recv(self, r: int, op: str, like: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        """The array rank `r` sends for `op`, which must be `like` `shape` (what the ranks
        agreed on): its header is checked and its length compared before anything is
        allocated. Any problem is a CollectiveError naming the rank."""
        peer = f"rank {r}"
        deadline = self._deadline()
        header, m = _wire.recv_header(self._peers[r], peer, deadline)
        if r == 0 and "error" in header:
            raise CollectiveError(f"{op} on rank {self.rank}: {header['error']!s:.1000}")
        if header.get("op") != op:
            raise CollectiveError(
                f"{op} on rank {self.rank}: rank {r} called {header.get('op')!r:.40} instead; "
                "every rank must call the same collectives in the same order"
            )
        dtype, got = _wire.array_spec(header, peer)
        if dtype != like or got != shape:
            mine = _wire.describe(like, shape)
            theirs = _wire.describe(dtype, got)
            if self.rank == 0:  # r gave what it holds
                why = f"rank 0 gave {mine}, rank {r} gave {theirs}"
            else:  # rank 0 sent a result
                why = f"rank {self.rank} expected {mine} from rank 0, which sent {theirs}"
            raise CollectiveError(f"{op}: {why}; every rank must pass the same shape and dtype")
        size = _wire.nbytes(dtype, got)
        if m != size:
            raise CollectiveError(
                f"{op}: rank {r} announced {m} bytes for {_wire.describe(dtype, got)} "
                f"({size} bytes)"
            )
        payload = _wire.exact(self._peers[r], m, peer, deadline)
        return np.frombuffer(payload, dtype).reshape(got)

    def _guard(self, op: str) -> None:
        if self._broken is not None:
            raise CollectiveError(
                f"{op} on rank {self.rank}: the group failed earlier: {self._broken}"
            )
        if not self._peers and self.world_size > 1:
            raise CollectiveError(f"{op} on rank {self.rank}: the group is closed")

    def _fail(self, message: str) -> None:
        """Rank 0: tell every rank why the collective failed, then raise."""
        self._broken = message
        end = time.monotonic() + min(self._timeout, 5.0)
        for r in range(1, self.world_size):
            try:
                _wire.send(self._peers[r], {"error": message}, peer=f"rank {r}", deadline=end)
            except CollectiveError:
                pass  # that rank is gone; the others are still told
        raise CollectiveError(message)

    def _run(self, op: str, work):
        """`work()` on this rank; a failure on rank 0 is told to every rank (`_fail`), and on
        any rank leaves the group failed (its streams are out of step)."""
        self._guard(op)
        try:
            return work()
        except CollectiveError as err:
            if self.rank == 0 and self._broken is None:
                self._fail(str(err))
            self._broken = self._broken or str(err)
            raise

    # -- collectives on numpy arrays ------------------------------------------------------------

    def _gather0(self, a: np.ndarray, op: str) -> list[np.ndarray] | None:
        """Rank 0: every rank's array in rank order, each checked against rank 0's shape and
        dtype; others send theirs and get None."""
        if self.rank != 0:
            self._send(0, {"op": op}, a)
            return None
        return [a] + [self._recv(r, op, a.dtype, a.shape) for r in range(1, self.world_size)]

    def _scatter0(self, out: np.ndarray | None, op: str, like: np.dtype, shape) -> np.ndarray:
        """Rank 0 sends `out` to every rank; the others receive it (`like` `shape`)."""
        if self.rank == 0:
            assert out is not None
            for r in range(1, self.world_size):
                self._send(r, {"op": op}, out)
            return out
        return self._recv(0, op, like, tuple(shape))

    def all_reduce_array(self, a: np.ndarray, op: str = "sum") -> np.ndarray:
        check_op(op)
        a = np.asarray(a)

        def work():
            parts = self._gather0(a, "all_reduce")
            out = None
            if parts is not None:
                out = parts[0].copy()
                for p in parts[1:]:
                    out += p
                if op == "mean":
                    out = (out / self.world_size).astype(a.dtype, copy=False)
            return self._scatter0(out, "all_reduce", a.dtype, a.shape)

        return self._run("all_reduce", work)

    def broadcast_array(self, a: np.ndarray, root: int = 0) -> np.ndarray:
        if not 0 <= root < self.world_size:
            raise ValueError(
                f"broadcast: root {root} is not a rank of a group of {self.world_size}"
            )
        a = np.asarray(a)

        def work():
            b = a
            if root != 0:  # through rank 0: the star has no other edges
                if self.rank == root:
                    self._send(0, {"op": "broadcast"}, a)
                elif self.rank == 0:
                    b = self._recv(root, "broadcast", a.dtype, a.shape)
            return self._scatter0(b if self.rank == 0 else None, "broadcast", a.dtype, a.shape)

        return self._run("broadcast", work)

    def all_gather_arrays(self, a: np.ndarray) -> list[np.ndarray]:
        a = np.asarray(a)

        def work():
            parts = self._gather0(a, "all_gather")
            stacked = np.stack(parts) if parts is not None else None
            shape = (self.world_size, *a.shape)
            return list(self._scatter0(stacked, "all_gather", a.dtype, shape))

        return self._run("all_gather", work)

    # -- on tensors -----------------------------------------------------------------------------

    def all_reduce(self, tensor: Any, op: str = "sum") -> Any:
        return _like(tensor, self.all_reduce_array(_host(tensor), op))

    def all_reduce_async(self, tensor: Any, op: str = "sum"):
        """Start `all_reduce` on this group's background thread (see `_async.py`). The tensor
        is read on the calling thread, so the caller may go on changing its buffers."""
        from ._async import Runner

        check_op(op)
        host = _host(tensor)
        if self._runner is None:
            self._runner = Runner(f"burn-collective-{self.rank}")
        return self._runner.submit(lambda: _like(tensor, self.all_reduce_array(host, op)))

    def broadcast(self, tensor: Any, root: int = 0) -> Any:
        return _like(tensor, self.broadcast_array(_host(tensor), root))

    def all_gather(self, tensor: Any) -> list[Any]:
        return [_like(tensor, a) for a in self.all_gather_arrays(_host(tensor))]

    def barrier(self) -> None:
        self.all_reduce_array(np.zeros(1, np.int64))

    def close(self) -> None:
        if self._runner is not None:
            self._runner.stop()
            self._runner = None
        for sock in self._peers.values():
            sock.close()
        self._peers = {}

    def __repr__(self) -> str:
        return f"ProcessGroup(rank={self.rank}, world_size={self.world_size})"


def _bytes(a: np.ndarray) -> memoryview:
    return memoryview(np.ascontiguousarray(a)).cast("B")


def _host(tensor: Any) -> np.ndarray:
    return np.asarray(tensor.to_data().numpy())


def _like(tensor: Any, a: np.ndarray) -> Any:
    from burn_tensor import Tensor

    return Tensor.from_data(np.array(a), tensor.device, tensor.dtype)
