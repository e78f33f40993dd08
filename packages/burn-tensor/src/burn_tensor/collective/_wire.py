"""Framed messages over a TCP socket: a JSON header and raw array bytes.

    u32 header length, header (JSON object), u64 payload length, payload

Arrays travel as their dtype string, shape and C-order bytes; nothing is unpickled. A receiver
never trusts a length: the header is capped, and a payload is read only once its length equals
what the header's dtype and shape give *and* what the receiver expects (the tensor the ranks
agreed on), so a frame cannot make it allocate more than the collective's own tensor. Every
read has a deadline for the whole message, not for each `recv`, so a peer trickling one byte
at a time cannot hold a rank past its timeout.
"""

from __future__ import annotations

import json
import math
import socket
import struct
import time
from typing import Any

import numpy as np

from ._errors import CollectiveError

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
# A header is a few fields; anything longer is not one of ours.
MAX_HEADER = 1 << 16
MAX_DIMS = 64  # numpy's limit on an array's rank


def frame(header: dict[str, Any], payload_len: int = 0) -> bytes:
    """The bytes that precede a payload of `payload_len` bytes."""
    head = json.dumps(header).encode()
    return _U32.pack(len(head)) + head + _U64.pack(payload_len)


def send(
    sock: socket.socket,
    header: dict[str, Any],
    payload: bytes | memoryview = b"",
    peer: str = "",
    deadline: float | None = None,
) -> None:
    """Send one message, all of it before `deadline` (`time.monotonic()`; None: 60 s). A
    broken or stalled connection is a CollectiveError naming `peer`."""
    end = deadline if deadline is not None else time.monotonic() + 60.0
    try:
        for part in (frame(header, len(payload)), payload):
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError("timed out")
            if len(part):
                sock.settimeout(left)  # sendall's timeout covers the whole call
                sock.sendall(part)
    except OSError as err:
        raise CollectiveError(f"lost the connection to {peer or 'a peer'}: {err}") from None


def recv_header(
    sock: socket.socket, peer: str, deadline: float, max_header: int = MAX_HEADER
) -> tuple[dict[str, Any], int]:
    """One message's header (a JSON object) and the payload length it announces; the payload
    itself is left unread, for the caller to check that length first."""
    (n,) = _U32.unpack(exact(sock, 4, peer, deadline))
    if n > max_header:
        raise CollectiveError(
            f"{peer} sent a {n}-byte header (at most {max_header}): not a burn collective peer"
        )
    try:
        header = json.loads(bytes(exact(sock, n, peer, deadline)))
    except (ValueError, RecursionError):
        raise CollectiveError(f"{peer} sent a malformed header") from None
    if not isinstance(header, dict):
        raise CollectiveError(f"{peer} sent a header that is not a JSON object")
    (m,) = _U64.unpack(exact(sock, 8, peer, deadline))
    return header, m


def exact(sock: socket.socket, n: int, peer: str, deadline: float) -> bytearray:
    """Exactly `n` bytes (the caller has bounded `n`), all of them before `deadline`
    (`time.monotonic()`)."""
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise CollectiveError(f"timed out waiting for {peer}")
        try:
            sock.settimeout(left)
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


def array_spec(header: dict[str, Any], peer: str) -> tuple[np.dtype, tuple[int, ...]]:
    """The dtype and shape a header announces, checked: a plain numeric dtype, at most
    `MAX_DIMS` dimensions, each a non-negative int."""
    name, shape = header.get("dtype"), header.get("shape")
    try:
        if not isinstance(name, str) or len(name) > 16:
            raise TypeError(name)
        dtype = np.dtype(name)
    except (TypeError, ValueError):
        raise CollectiveError(f"{peer} sent a malformed dtype {name!r:.40}") from None
    if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None:
        raise CollectiveError(f"{peer} sent dtype {dtype}: only plain numeric arrays travel")
    if (
        not isinstance(shape, list)
        or len(shape) > MAX_DIMS
        or any(type(d) is not int for d in shape)
    ):
        raise CollectiveError(
            f"{peer} sent a malformed shape {shape!r:.100}: a list of at most {MAX_DIMS} ints"
        )
    if any(d < 0 for d in shape):
        raise CollectiveError(f"{peer} sent shape {shape!r:.100}: a dimension is negative")
    return dtype, tuple(shape)


def nbytes(dtype: np.dtype, shape: tuple[int, ...]) -> int:
    """Bytes of an array (Python ints: no overflow, however large the claim)."""
    return math.prod(shape) * dtype.itemsize


def describe(dtype: np.dtype, shape: tuple[int, ...]) -> str:
    return f"{dtype} {list(shape)}"
