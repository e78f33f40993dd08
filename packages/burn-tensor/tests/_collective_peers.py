"""Helpers of the collective security tests: real sockets on 127.0.0.1, a rank 0 in a thread,
and raw frames written by hand (not through `_wire`), so a test speaks exactly the bytes a
stranger or a buggy rank would."""

from __future__ import annotations

import json
import secrets
import socket
import struct
import threading
import time

from burn_tensor.collective import ProcessGroup

TOKEN = secrets.token_hex(16)
ADDR = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((ADDR, 0))
        return s.getsockname()[1]


def raw_frame(header: dict, payload: bytes = b"", claimed: int | None = None) -> bytes:
    """u32 header length, JSON header, u64 payload length (`claimed`, default the real one),
    payload."""
    head = json.dumps(header).encode()
    n = len(payload) if claimed is None else claimed
    return struct.pack("<I", len(head)) + head + struct.pack("<Q", n) + payload


def read_frame(sock: socket.socket, timeout: float = 5.0) -> tuple[dict, bytes] | None:
    """One frame from `sock`, or None if it closes first."""
    sock.settimeout(timeout)

    def exact(n: int) -> bytes | None:
        buf = b""
        while len(buf) < n:
            try:
                chunk = sock.recv(n - len(buf))
            except ConnectionError:
                return None
            if not chunk:
                return None
            buf += chunk
        return buf

    n = exact(4)
    head = n is not None and exact(struct.unpack("<I", n)[0])
    m = head and exact(8)
    if not m:
        return None
    body = exact(struct.unpack("<Q", m)[0])
    return (json.loads(head), body) if body is not None else None


def read_all(sock: socket.socket, timeout: float = 5.0) -> bytes:
    """Every byte until the peer closes (or `timeout` passes)."""
    sock.settimeout(timeout)
    out = b""
    try:
        while chunk := sock.recv(4096):
            out += chunk
    except (TimeoutError, ConnectionError):
        pass
    return out


def dial(port: int, timeout: float = 10.0) -> socket.socket:
    """A connection to rank 0, retried until it listens."""
    end = time.monotonic() + timeout
    while True:
        try:
            return socket.create_connection((ADDR, port), timeout=timeout)
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.02)


class Rank:
    """`ProcessGroup.connect` in a thread: `.group` or `.error` once `.join()` returns."""

    def __init__(self, rank: int, world: int, port: int, **kw) -> None:
        self.group: ProcessGroup | None = None
        self.error: BaseException | None = None
        self.seconds = 0.0

        def run() -> None:
            start = time.monotonic()
            try:
                self.group = ProcessGroup.connect(rank, world, ADDR, port, **kw)
            except BaseException as err:  # noqa: BLE001 - the test reads it
                self.error = err
            self.seconds = time.monotonic() - start

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def join(self, timeout: float = 30.0) -> Rank:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the rank is still in its rendezvous"
        return self
