"""The rendezvous of a `ProcessGroup`: rank 0 admits the other ranks, each proving the job's
token, and each joiner checks that rank 0 proves it too (`_auth.py`).

    rank 0 -> joiner   {"burn_collective": 1, "nonce": n0}
    joiner -> rank 0   {"rank": r, "world_size": w, "nonce": n1, "mac": HMAC(join, n0, n1, r, w)}
    rank 0 -> joiner   {"mac": HMAC(accept, n0, n1, r, w)}   or   {"error": why}
    ...once every rank is in...
    rank 0 -> joiner   {"ready": true}

Rank 0 serves every connection at once (one selector, no threads), each with its own deadline
for its whole handshake, and reads no more than the handshake's bounded header: no payload is
accepted before the group is complete. A connection that is not a rank of this job (garbage,
an HTTP request, a wrong token, one that closes, stays silent or trickles) is dropped and
logged on the `burn_tensor.collective` logger, and rank 0 keeps accepting until the real ranks
arrive or its timeout ends. A joiner whose connection is closed or not answered before rank
0's hello retries until its own timeout (rank 0 may be starting, or busy with strangers).
"""

from __future__ import annotations

import json
import logging
import selectors
import socket
import time
from dataclasses import dataclass, field

from . import _wire
from ._auth import NONCE_HEX, TOKEN_ENV, check_proof, is_hex, new_nonce, proof
from ._errors import CollectiveError

log = logging.getLogger("burn_tensor.collective")

HANDSHAKE_TIMEOUT = 10.0  # seconds a connection has for its whole handshake
MAX_PENDING = 64  # connections in the handshake at once; more are closed at once
HANDSHAKE_HEADER = 512  # bytes: a join message is ~200
MAX_LOGGED = 20  # drops logged as warnings; later ones at debug level (a flood stays quiet)


@dataclass
class _Conn:
    """A connection in the handshake: what rank 0 has read of its join message so far."""

    sock: socket.socket
    addr: str
    deadline: float
    nonce: str
    buf: bytearray = field(default_factory=bytearray)


class _Server:
    """Rank 0's side of one rendezvous."""

    def __init__(self, server: socket.socket, world: int, token: bytes | None, where: str):
        self.server, self.world, self.token, self.where = server, world, token, where
        self.sel = selectors.DefaultSelector()
        self.pending: dict[socket.socket, _Conn] = {}
        self.peers: dict[int, socket.socket] = {}
        self.refused: list[str] = []  # authenticated ranks sent away (misconfigured jobs)
        self.drops = 0

    def run(self, timeout: float, handshake: float) -> dict[int, socket.socket]:
        deadline = time.monotonic() + timeout
        self.server.setblocking(False)
        self.sel.register(self.server, selectors.EVENT_READ, None)
        ok = False
        try:
            while len(self.peers) < self.world - 1:
                now = time.monotonic()
                if now >= deadline:
                    raise CollectiveError(self._timed_out(timeout))
                wake = min([deadline, *(c.deadline for c in self.pending.values())])
                for key, _ in self.sel.select(max(0.0, wake - now)):
                    if key.data is None:
                        self._accept(handshake)
                    elif isinstance(key.data, _Conn):
                        self._read(key.data)
                    else:
                        self._joined_peer_readable(key.data)
                now = time.monotonic()
                for conn in [c for c in self.pending.values() if c.deadline <= now]:
                    self._drop(conn, f"no complete handshake within {handshake} s (silent or slow)")
            end = time.monotonic() + handshake
            for rank, sock in self.peers.items():
                self.sel.unregister(sock)
                sock.setblocking(True)
                _wire.send(sock, {"ready": True}, peer=f"rank {rank}", deadline=end)
            ok = True
            return self.peers
        finally:
            for conn in list(self.pending.values()):
                self._drop(conn, "still in the handshake when the rendezvous ended")
            self.sel.close()
            if not ok:
                for sock in self.peers.values():
                    sock.close()

    def _timed_out(self, timeout: float) -> str:
        missing = sorted(set(range(1, self.world)) - set(self.peers))
        msg = f"rendezvous at {self.where}: ranks {missing} did not join within {timeout} s"
        if self.refused:
            msg += f"; refused: {'; '.join(self.refused[-3:])}"
        if self.drops:
            msg += f"; dropped {self.drops} connection(s) that were not ranks of this job"
        return msg

    def _accept(self, handshake: float) -> None:
        try:
            sock, addr = self.server.accept()
        except BlockingIOError:
            return
        except OSError as err:  # out of file descriptors, ...: the listener itself is fine
            self.drops += 1  # counted, so a storm of these is logged at debug level
            self._log(f"could not accept a connection: {err}")
            time.sleep(0.05)  # the cause (fds) outlasts one poll: do not spin on it
            return
        conn = _Conn(sock, f"{addr[0]}:{addr[1]}", time.monotonic() + handshake, new_nonce())
        if len(self.pending) >= MAX_PENDING:
            self._drop(conn, f"{MAX_PENDING} connections already in the handshake")
            return
        sock.setblocking(False)
        self.pending[sock] = conn
        self.sel.register(sock, selectors.EVENT_READ, conn)
        if not self._reply(conn, {"burn_collective": 1, "nonce": conn.nonce}):
            self._drop(conn, "could not be written to")

    def _reply(self, conn: _Conn, header: dict) -> bool:
        """Send a handshake message without blocking (a few hundred bytes always fit in a new
        socket's buffer; a peer that does not read them is dropped)."""
        data = _wire.frame(header)
        try:
            return conn.sock.send(data) == len(data)
        except OSError:
            return False

    def _read(self, conn: _Conn) -> None:
        buf = conn.buf
        n = int.from_bytes(buf[:4], "little") if len(buf) >= 4 else 0
        need = 4 - len(buf) if len(buf) < 4 else 4 + n + 8 - len(buf)
        try:
            chunk = conn.sock.recv(need)
        except BlockingIOError:
            return
        except ConnectionError:  # closed with our hello unread: a reset
            chunk = b""
        except OSError as err:
            self._drop(conn, f"connection error: {err}")
            return
        if not chunk:
            self._drop(conn, "closed the connection during the handshake")
            return
        buf += chunk
        if len(buf) < 4:
            return
        n = int.from_bytes(buf[:4], "little")
        if n > HANDSHAKE_HEADER:
            self._drop(conn, f"sent a {n}-byte header (a join message has at most "
                             f"{HANDSHAKE_HEADER}): not a burn rank")  # fmt: skip
            return
        if len(buf) < 4 + n + 8:
            return
        m = int.from_bytes(buf[4 + n :], "little")
        if m:
            self._drop(conn, f"announced a {m}-byte payload: none is accepted in the rendezvous")
            return
        try:
            header = json.loads(bytes(buf[4 : 4 + n]))
        except (ValueError, RecursionError):
            header = None
        if not isinstance(header, dict):
            self._drop(conn, "sent a malformed join message: not a burn rank")
            return
        self._admit(conn, header)

    def _admit(self, conn: _Conn, msg: dict) -> None:
        rank, world, nonce = msg.get("rank"), msg.get("world_size"), msg.get("nonce")
        proven = (
            self.token is not None
            and type(rank) is int
            and type(world) is int
            and is_hex(nonce, NONCE_HEX)
            and check_proof(
                proof(self.token, "join", conn.nonce, nonce, rank, world), msg.get("mac")
            )
        )
        if not proven:  # a stranger, or a process of another job: it learns nothing more
            self._reply(conn, {"error": f"authentication failed: wrong or no {TOKEN_ENV}"})
            self._drop(conn, f"failed authentication (claimed rank {rank!r:.20}): not a rank of "
                             "this job (wrong or no token)")  # fmt: skip
            return
        # Authenticated: a process of this job, maybe misconfigured. It is told why, and the
        # reason is kept for rank 0's own error if the group never completes.
        why = None
        if world != self.world:
            why = f"rank {rank} says world size {world}, rank 0 says {self.world}"
        elif not 0 < rank < self.world:
            why = f"a peer claimed rank {rank}, not one of 1..{self.world - 1}"
        elif rank in self.peers:
            why = f"rank {rank} joined twice"
        if why is not None:
            self.refused.append(why)
            self._reply(conn, {"error": why})
            self._drop(conn, why)
            return
        accept = proof(self.token, "accept", conn.nonce, nonce, rank, world)
        if not self._reply(conn, {"mac": accept}):
            self._drop(conn, "could not be written to")
            return
        del self.pending[conn.sock]
        self.sel.modify(conn.sock, selectors.EVENT_READ, rank)
        self.peers[rank] = conn.sock

    def _joined_peer_readable(self, rank: int) -> None:
        """A rank already in said something (or left) before the group was complete: it is
        out, and its rank may join again (a restarted process)."""
        sock = self.peers[rank]
        try:
            data = sock.recv(1)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        self.sel.unregister(sock)
        sock.close()
        del self.peers[rank]
        why = "left" if not data else "sent data"
        self._log(f"rank {rank} {why} before the group was complete; its rank is free again")

    def _drop(self, conn: _Conn, why: str) -> None:
        self.pending.pop(conn.sock, None)
        try:
            self.sel.unregister(conn.sock)
        except (KeyError, ValueError):
            pass
        conn.sock.close()
        self.drops += 1
        self._log(f"dropped the connection from {conn.addr}: {why}")

    def _log(self, message: str) -> None:
        level = logging.WARNING if self.drops <= MAX_LOGGED else logging.DEBUG
        if self.drops == MAX_LOGGED + 1:
            log.warning("rendezvous at %s: more dropped connections are logged at debug level",
                        self.where)  # fmt: skip
        log.log(level, "rendezvous at %s: %s", self.where, message)


def serve(
    server: socket.socket, world: int, token: bytes | None, timeout: float, handshake: float,
    where: str,
) -> dict[int, socket.socket]:  # fmt: skip
    """Rank 0: the sockets of ranks 1..world-1, each authenticated, once all are in."""
    return _Server(server, world, token, where).run(timeout, handshake)


class _Retry(Exception):
    """The connection went away before rank 0 said hello: try again."""


def join(
    addr: str, port: int, rank: int, world: int, token: bytes, timeout: float, handshake: float
) -> socket.socket:
    """A joiner: the socket to rank 0, both sides authenticated, after rank 0's "ready"."""
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        sock = _dial(addr, port, deadline, rank)
        try:
            end = min(deadline, time.monotonic() + handshake)
            _handshake(sock, addr, port, rank, world, token, end)
            ready, m = _wire.recv_header(sock, "rank 0", deadline, HANDSHAKE_HEADER)
            if m or ready.get("ready") is not True:
                raise CollectiveError(f"rank {rank}: rank 0 sent {ready!r:.100} instead of ready")
            return sock
        except _Retry as why:
            sock.close()
            if time.monotonic() + delay >= deadline:
                raise CollectiveError(
                    f"rank {rank}: could not join rank 0 at {addr}:{port} within {timeout} s "
                    f"({why})"
                ) from None
            log.info("rank %d: rank 0 at %s:%d did not answer (%s); retrying",
                     rank, addr, port, why)  # fmt: skip
            time.sleep(delay)
            delay = min(delay * 2, 1.0)
        except BaseException:
            sock.close()
            raise


def _handshake(
    sock: socket.socket, addr: str, port: int, rank: int, world: int, token: bytes, end: float
) -> None:
    where = f"{addr}:{port}"
    try:
        hello, m = _wire.recv_header(sock, "rank 0", end, HANDSHAKE_HEADER)
    except CollectiveError as err:
        raise _Retry(str(err)) from None
    server_nonce = hello.get("nonce")
    if m or hello.get("burn_collective") != 1 or not is_hex(server_nonce, NONCE_HEX):
        raise CollectiveError(
            f"rank {rank}: the process at {where} is not a burn rank 0 (another program holds "
            "the port?)"
        )
    nonce = new_nonce()
    join_mac = proof(token, "join", server_nonce, nonce, rank, world)
    msg = {"rank": rank, "world_size": world, "nonce": nonce, "mac": join_mac}
    _wire.send(sock, msg, peer="rank 0", deadline=end)
    try:
        verdict, m = _wire.recv_header(sock, "rank 0", end, HANDSHAKE_HEADER)
    except CollectiveError as err:
        raise _Retry(str(err)) from None
    if "error" in verdict:
        raise CollectiveError(
            f"rank {rank}: rank 0 at {where} refused it: {verdict['error']!s:.200}"
        )
    accept = proof(token, "accept", server_nonce, nonce, rank, world)
    if m or not check_proof(accept, verdict.get("mac")):
        raise CollectiveError(
            f"rank {rank}: the process at {where} could not prove it knows {TOKEN_ENV}: it is "
            "not this job's rank 0 (another process took the port, or it belongs to another job)"
        )


def _dial(addr: str, port: int, deadline: float, rank: int) -> socket.socket:
    delay = 0.05
    while True:
        left = deadline - time.monotonic()
        try:
            if left <= 0:
                raise TimeoutError("timed out")
            sock = socket.create_connection((addr, port), timeout=min(left, 10.0))
            no_delay(sock)
            return sock
        except OSError as err:
            if time.monotonic() + delay >= deadline:
                raise CollectiveError(
                    f"rank {rank}: could not reach rank 0 at {addr}:{port} in time ({err})"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 1.0)


def no_delay(sock: socket.socket) -> None:
    # Collectives are request/response exchanges of small messages: with Nagle's algorithm each
    # one waited for a delayed ACK (~40 ms), which made 2-GPU training 45x slower than 1 GPU.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    keep_alive(sock)


KEEPALIVE_IDLE, KEEPALIVE_INTERVAL, KEEPALIVE_COUNT = 10, 5, 3


def keep_alive(sock: socket.socket) -> None:
    """TCP keepalive probes: a peer whose host vanished (power, network: no FIN ever comes)
    is found dead after ~25 s of silence (10 s idle, then 3 probes 5 s apart) and the waiting
    collective fails naming it, instead of waiting out the per-message timeout (600 s)."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, value in (
        ("TCP_KEEPIDLE", KEEPALIVE_IDLE),
        ("TCP_KEEPINTVL", KEEPALIVE_INTERVAL),
        ("TCP_KEEPCNT", KEEPALIVE_COUNT),
    ):
        opt = getattr(socket, name, None)  # Linux names; macOS has TCP_KEEPALIVE instead
        if opt is not None:
            sock.setsockopt(socket.IPPROTO_TCP, opt, value)
