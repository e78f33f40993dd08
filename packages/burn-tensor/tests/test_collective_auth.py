"""The rendezvous admits only ranks of this job (security review §4, F5 and F7).

Real sockets on 127.0.0.1; rank 0 and the real ranks run `ProcessGroup.connect` in threads,
strangers write raw bytes. Each stranger must be dropped and logged while rank 0 goes on
accepting, and the real rank 1 must still join and reduce correctly.
"""

from __future__ import annotations

import logging
import socket
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from _collective_peers import (
    ADDR,
    TOKEN,
    Rank,
    dial,
    free_port,
    raw_frame,
    read_all,
    read_frame,
)
from burn_tensor.collective import CollectiveError, ProcessGroup

LOGGER = "burn_tensor.collective"


@pytest.fixture(autouse=True)
def _token(monkeypatch, caplog):
    monkeypatch.setenv("BURN_COLLECTIVE_TOKEN", TOKEN)
    caplog.set_level(logging.INFO, LOGGER)


def _reduce(r0: Rank, r1: Rank) -> tuple[np.ndarray, np.ndarray]:
    """Rank 0 all-reduces [1, 2] and rank 1 [3, 4]; both results."""
    assert r0.error is None, r0.error
    assert r1.error is None, r1.error
    out: dict[int, np.ndarray] = {}

    def go(rank: Rank, values: list[float], key: int) -> None:
        out[key] = rank.group.all_reduce_array(np.array(values, np.float32))

    t = threading.Thread(target=go, args=(r1, [3.0, 4.0], 1))
    t.start()
    go(r0, [1.0, 2.0], 0)
    t.join(10)
    r0.group.close()
    r1.group.close()
    return out[0], out[1]


def _completes(r0: Rank, port: int, **kw) -> Rank:
    """The real rank 1 joins and the job's all-reduce is right on both ranks."""
    r1 = Rank(1, 2, port, timeout=kw.pop("timeout", 10), **kw).join()
    r0.join()
    a, b = _reduce(r0, r1)
    np.testing.assert_array_equal(a, [4.0, 6.0])
    np.testing.assert_array_equal(b, [4.0, 6.0])
    return r1


def _logged(caplog, fragment: str, wait: float = 5.0) -> bool:
    end = time.monotonic() + wait
    while time.monotonic() < end:
        if any(fragment in r.getMessage() for r in caplog.records if r.name == LOGGER):
            return True
        time.sleep(0.02)
    return False


def test_a_stranger_posing_as_rank_1_is_refused_and_the_real_rank_1_joins(caplog):
    """F5's reproducer: claim rank 1 without the token, inject a 1e30 gradient."""
    port = free_port()
    r0 = Rank(0, 2, port, timeout=10)
    s = dial(port)
    s.sendall(raw_frame({"rank": 1, "world_size": 2}))
    grad = np.array([1e30, -7], np.float32).tobytes()
    try:
        s.sendall(raw_frame({"op": "all_reduce", "dtype": "<f4", "shape": [2]}, grad))
    except ConnectionError:
        pass  # rank 0 already hung up: fine
    got = read_all(s, timeout=5)
    s.close()
    assert b"authentication failed" in got
    assert b"all_reduce" not in got and b"ready" not in got  # it learnt nothing
    _completes(r0, port)
    assert _logged(caplog, "failed authentication (claimed rank 1)")


def _http(port):
    s = dial(port)
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    return s


def _close(port):
    dial(port).close()


def _overlong(port):
    s = dial(port)
    s.sendall(b"\xff\xff\xff\xff")
    return s


def _world_99(port):
    s = dial(port)
    s.sendall(raw_frame({"rank": 1, "world_size": 99}))
    return s


def _payload(port):
    """F6's 24-byte frame: a join header announcing a 2 GiB payload."""
    s = dial(port)
    s.sendall(raw_frame({"rank": 1, "world_size": 2}, claimed=2**31))
    return s


def _not_json(port):
    s = dial(port)
    s.sendall(b"\x05\x00\x00\x00{{{{{" + b"\x00" * 8)
    return s


def _wrong_token(port):
    r = Rank(1, 2, port, timeout=10, token="f" * 32).join()
    assert isinstance(r.error, CollectiveError)
    assert "refused it: authentication failed" in str(r.error)


def _silent(port):
    return dial(port)


STRANGERS = {
    "http": (_http, "-byte header"),
    "connect_then_close": (_close, "closed the connection during the handshake"),
    "over_long_header": (_overlong, "4294967295-byte header"),
    "world_size_99_no_token": (_world_99, "failed authentication"),
    "payload_in_rendezvous": (_payload, "2147483648-byte payload"),
    "not_json": (_not_json, "malformed join message"),
    "wrong_token": (_wrong_token, "failed authentication"),
    "silent": (_silent, "still in the handshake when the rendezvous ended"),
}


@pytest.mark.parametrize("kind", list(STRANGERS))
def test_a_stranger_is_dropped_and_logged_and_the_job_goes_on(caplog, kind):
    """F7: garbage, a closed or silent connection, a wrong token: rank 0 drops it and goes on."""
    act, fragment = STRANGERS[kind]
    port = free_port()
    r0 = Rank(0, 2, port, timeout=10)
    held = act(port)
    if kind != "silent":  # dropped before the real rank arrives
        assert _logged(caplog, fragment), [r.getMessage() for r in caplog.records]
    _completes(r0, port)
    assert _logged(caplog, fragment, wait=0.5)
    if held is not None:
        held.close()


def test_a_trickling_stranger_does_not_hold_rank_0():
    """F7's slowloris: a join message at one byte per 0.2 s (7 s in all) against a 3 s timeout.
    The real rank 1 joins at once; rank 0 does not wait for the trickle."""
    port = free_port()
    r0 = Rank(0, 2, port, timeout=3)
    s = dial(port)
    frame = raw_frame({"rank": 1, "world_size": 2})

    def trickle() -> None:
        for b in frame:
            try:
                s.send(bytes([b]))
            except OSError:
                return
            time.sleep(0.2)

    threading.Thread(target=trickle, daemon=True).start()
    time.sleep(0.3)
    r1 = _completes(r0, port, timeout=3)
    assert r1.seconds < 2.5
    s.close()


def test_a_slow_connection_is_dropped_at_its_handshake_deadline(caplog):
    """The handshake deadline covers the whole message, not each recv: a trickle that sends a
    byte every 0.1 s is cut at 0.5 s, while the rendezvous keeps waiting for rank 1."""
    port = free_port()
    r0 = Rank(0, 2, port, timeout=10, handshake_timeout=0.5)
    s = dial(port)
    start = time.monotonic()
    closed_after = None
    for b in raw_frame({"rank": 1, "world_size": 2}):
        try:
            s.send(bytes([b]))
        except OSError:
            closed_after = time.monotonic() - start
            break
        time.sleep(0.1)
    assert closed_after is not None and closed_after < 2.0, "rank 0 kept the trickle"
    assert _logged(caplog, "no complete handshake within 0.5 s")
    _completes(r0, port)
    s.close()


def test_a_flood_of_silent_connections_delays_but_does_not_stop_the_real_rank(caplog):
    """More silent connections than rank 0 handshakes at once: the extra ones are closed at
    once, the rest time out; the real rank retries until it is in."""
    port = free_port()
    r0 = Rank(0, 2, port, timeout=20, handshake_timeout=0.5)
    flood = [dial(port) for _ in range(70)]
    r1 = _completes(r0, port, timeout=20)
    assert r1.seconds < 10
    assert _logged(caplog, "connections already in the handshake", wait=0.1)
    for s in flood:
        s.close()


def _impostor(mode: str):
    """A process holding the port that speaks the protocol without knowing the token."""
    srv = socket.create_server((ADDR, 0))
    port = srv.getsockname()[1]
    conns = []

    def serve() -> None:
        c, _ = srv.accept()
        conns.append(c)
        if mode == "no_hello":
            c.sendall(raw_frame({"ready": True}))
            return
        c.sendall(raw_frame({"burn_collective": 1, "nonce": "ab" * 16}))
        join = read_frame(c)
        mac = join[0].get("mac") if mode == "reflected" and join else "00" * 32
        c.sendall(raw_frame({"mac": mac}) + raw_frame({"ready": True}))

    threading.Thread(target=serve, daemon=True).start()
    return srv, port, conns


@pytest.mark.parametrize("mode", ["forged", "reflected", "no_hello"])
def test_an_impostor_rank_0_is_detected_by_the_joiner(mode):
    """The joiner checks rank 0 too: a process that took rank 0's port (F23's `_free_port`
    race) cannot prove the token, even by reflecting the joiner's own proof."""
    srv, port, conns = _impostor(mode)
    r1 = Rank(1, 2, port, timeout=5).join()
    assert isinstance(r1.error, CollectiveError), r1.error
    want = "is not a burn rank 0" if mode == "no_hello" else "could not prove it knows"
    assert want in str(r1.error)
    srv.close()
    for c in conns:
        c.close()


def test_rank_0_names_a_port_another_process_holds():
    with socket.create_server((ADDR, 0)) as squatter:
        port = squatter.getsockname()[1]
        with pytest.raises(CollectiveError, match=rf"rank 0 could not listen on .*:{port}"):
            ProcessGroup.connect(0, 2, ADDR, port, timeout=2)


def test_a_misconfigured_rank_of_the_job_is_told_and_rank_0_goes_on(caplog):
    """An authenticated joiner with the wrong world size is refused with the reason; rank 0
    keeps waiting for the right rank 1."""
    port = free_port()
    r0 = Rank(0, 2, port, timeout=10)
    bad = Rank(1, 3, port, timeout=10).join()
    assert isinstance(bad.error, CollectiveError)
    assert "rank 1 says world size 3, rank 0 says 2" in str(bad.error)
    _completes(r0, port)


def test_the_timeout_names_the_missing_ranks_and_the_refusals():
    port = free_port()
    r0 = Rank(0, 3, port, timeout=1.5)
    Rank(2, 4, port, timeout=5).join()  # authenticated, wrong world size
    r0.join()
    assert isinstance(r0.error, CollectiveError)
    msg = str(r0.error)
    assert "ranks [1, 2] did not join within 1.5 s" in msg
    assert "rank 2 says world size 4" in msg


@pytest.mark.parametrize("token", [None, "short"])
def test_a_group_of_several_processes_needs_a_token(monkeypatch, token):
    monkeypatch.delenv("BURN_COLLECTIVE_TOKEN")
    want = "no BURN_COLLECTIVE_TOKEN" if token is None else "use at least 16"
    for rank in (0, 1):
        with pytest.raises(CollectiveError, match=want):
            ProcessGroup.connect(rank, 2, ADDR, free_port(), timeout=1, token=token)


def test_one_process_needs_no_token(monkeypatch):
    monkeypatch.delenv("BURN_COLLECTIVE_TOKEN")
    g = ProcessGroup.connect(0, 1, ADDR, 0, timeout=1)
    np.testing.assert_array_equal(g.all_reduce_array(np.array([2.0])), [2.0])
    g.close()


@pytest.mark.parametrize(("rank", "port"), [(0, 70000), (1, -1), (1, 0)])
def test_a_port_out_of_range_is_a_collective_error(rank, port):
    """Not socket's raw OverflowError."""
    with pytest.raises(CollectiveError, match=f"master port {port} is not a TCP port"):
        ProcessGroup.connect(rank, 2, ADDR, port, timeout=1)
