"""Framed messages over a TCP socket: a JSON header and raw array bytes.

    u32 header length, header (JSON), u64 payload length, payload

Arrays travel as their dtype string, shape and C-order bytes; nothing is unpickled.
"""

from __future__ import annotations

import json
import socket
import struct
from typing import Any

import numpy as np

from ._errors import CollectiveError

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
# A header is a few fields; anything longer is not one of ours.
MAX_HEADER = 1 << 16


def send(sock: socket.socket, header: dict[str, Any], payload: bytes | memoryview = b"") -> None:
    head = json.dumps(header).encode()
    sock.sendall(_U32.pack(len(head)) + head + _U64.pack(len(payload)))
    if len(payload):
        sock.sendall(payload)


def recv(sock: socket.socket, peer: str) -> tuple[dict[str, Any], bytearray]:
    (n,) = _U32.unpack(_exact(sock, 4, peer))
    if n > MAX_HEADER:
        raise CollectiveError(f"{peer} sent a {n}-byte header: not a burn collective peer")
    try:
        header = json.loads(bytes(_exact(sock, n, peer)))
    except ValueError:
        raise CollectiveError(f"{peer} sent a malformed header") from None
    (m,) = _U64.unpack(_exact(sock, 8, peer))
    return header, _exact(sock, m, peer)


def _exact(sock: socket.socket, n: int, peer: str) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        try:
            k = sock.recv_into(view[got:])
        except TimeoutError:
            raise CollectiveError(f"timed out waiting for {peer}") from None
        except OSError as err:
            raise CollectiveError(f"lost the connection to {peer}: {err}") from None
        if k == 0:
            raise CollectiveError(f"{peer} closed the connection (the process ended or failed)")
        got += k
    return buf


def array_header(a: np.ndarray) -> dict[str, Any]:
    return {"dtype": a.dtype.str, "shape": list(a.shape)}


def to_array(header: dict[str, Any], payload: bytearray, peer: str) -> np.ndarray:
    try:
        dtype = np.dtype(header["dtype"])
        shape = tuple(int(d) for d in header["shape"])
    except (KeyError, TypeError, ValueError):
        raise CollectiveError(f"{peer} sent a malformed array header {header!r:.100}") from None
    if dtype.hasobject or int(np.prod(shape)) * dtype.itemsize != len(payload):
        raise CollectiveError(f"{peer} sent {len(payload)} bytes for {dtype} {list(shape)}")
    return np.frombuffer(payload, dtype).reshape(shape)
