"""Frame lengths and array headers are checked before anything is allocated (security review
§4, F6 and F23).

A frame's payload must be exactly what its header's dtype and shape give and what the
collective's agreed tensor is; a bad one is a CollectiveError naming the sender on every rank
(rank 0 tells the others), never a raw ValueError/OverflowError, a 2 GiB allocation or a hang.
Real sockets on 127.0.0.1: the honest ranks run `ProcessGroup` in threads (or, to measure
memory, rank 0 in a fresh process); the faulty rank writes raw bytes on its joined socket.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from _collective_peers import TOKEN, Rank, dial, free_port, raw_frame, read_frame
from burn_tensor.collective import CollectiveError

MIB = 1 << 20
F4 = {"op": "all_reduce", "dtype": "<f4"}


@pytest.fixture(autouse=True)
def _token(monkeypatch):
    monkeypatch.setenv("BURN_COLLECTIVE_TOKEN", TOKEN)


def _groups(n: int, timeout: float = 5.0):
    port = free_port()
    ranks = [Rank(r, n, port, timeout=timeout) for r in range(n)]
    for r in ranks:
        r.join()
        assert r.error is None, r.error
    return [r.group for r in ranks]


class _InThread:
    """`fn()` in a thread; `()` gives (its value or exception, seconds it took)."""

    def __init__(self, fn) -> None:
        self.box: dict = {}

        def go() -> None:
            start = time.monotonic()
            try:
                self.box["value"] = fn()
            except BaseException as err:  # noqa: BLE001 - the test reads it
                self.box["value"] = err
            self.box["seconds"] = time.monotonic() - start

        self.thread = threading.Thread(target=go, daemon=True)
        self.thread.start()

    def done(self) -> bool:
        return not self.thread.is_alive()

    def __call__(self, timeout: float = 15.0):
        self.thread.join(timeout)
        assert self.done(), "the collective is still waiting"
        return self.box["value"], self.box["seconds"]


BAD_FRAMES = {
    # name: (header, payload, claimed length, what rank 0's error says)
    "negative_dims": ({**F4, "shape": [-1, -2]}, b"\0" * 8, None, "a dimension is negative"),
    "dims_overflow": ({**F4, "shape": [2**62, 2**62]}, b"\0" * 8, None,
                      "rank 1 gave float32 [4611686018427387904, 4611686018427387904]"),
    "float_dim": ({**F4, "shape": [2.0]}, b"\0" * 8, None, "malformed shape"),
    "bool_dim": ({**F4, "shape": [True, 2]}, b"\0" * 8, None, "malformed shape"),
    "65_dims": ({**F4, "shape": [1] * 65}, b"\0" * 4, None, "malformed shape"),
    "object_dtype": ({**F4, "dtype": "|O", "shape": [2]}, b"\0" * 16, None, "dtype object"),
    "structured_dtype": ({**F4, "dtype": [["a", "<f4"]], "shape": [2]}, b"\0" * 8, None,
                         "malformed dtype"),
    "other_dtype": ({**F4, "dtype": "<f8", "shape": [2]}, b"\0" * 16, None,
                    "rank 0 gave float32 [2], rank 1 gave float64 [2]"),
    "other_shape": ({**F4, "shape": [3]}, b"\0" * 12, None,
                    "rank 0 gave float32 [2], rank 1 gave float32 [3]"),
    "length_short": ({**F4, "shape": [2]}, b"\0" * 4, None, "announced 4 bytes for float32 [2]"),
    "length_2GiB": ({**F4, "shape": [2]}, b"", 2**31, "announced 2147483648 bytes"),
    "length_2^63": ({**F4, "shape": [2]}, b"", 2**63, "announced 9223372036854775808 bytes"),
    "other_op": ({**F4, "op": "broadcast", "shape": [2]}, b"\0" * 8, None,
                 "rank 1 called 'broadcast' instead"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(BAD_FRAMES))
def test_a_bad_frame_is_a_collective_error_naming_the_rank_on_every_rank(name):
    header, payload, claimed, want = BAD_FRAMES[name]
    g0, g1 = _groups(2)
    result = _InThread(lambda: g0.all_reduce_array(np.ones(2, np.float32)))
    sock = g1._peers[0]
    sock.sendall(raw_frame(header, payload, claimed))
    reply = read_frame(sock)
    err, _ = result()
    assert isinstance(err, CollectiveError), repr(err)
    assert "rank 1" in str(err) and want in str(err), str(err)
    assert reply is not None and want in reply[0]["error"]  # rank 0 told the sender too
    with pytest.raises(CollectiveError, match="the group failed earlier"):
        g0.all_reduce_array(np.ones(2, np.float32))  # its streams are out of step: it stays failed
    g0.close()
    g1.close()


def test_negative_dims_from_one_rank_fail_every_rank_at_once():
    """F23: rank 2 sends shape [-1, -2]; rank 0 and the innocent rank 1 both get a
    CollectiveError naming rank 2, rank 1 without waiting for its timeout."""
    g0, g1, g2 = _groups(3, timeout=10)
    r0 = _InThread(lambda: g0.all_reduce_array(np.ones(2, np.float32)))
    r1 = _InThread(lambda: g1.all_reduce_array(np.ones(2, np.float32)))
    g2._peers[0].sendall(raw_frame({**F4, "shape": [-1, -2]}, b"\0" * 8))
    for err, seconds in (r0(), r1()):
        assert isinstance(err, CollectiveError), repr(err)
        assert "rank 2 sent shape [-1, -2]: a dimension is negative" in str(err)
        assert seconds < 5.0
    for g in (g0, g1, g2):
        g.close()


def test_a_frame_from_rank_0_is_checked_by_the_other_ranks():
    """A buggy rank 0 announcing a 1 TiB result: rank 1 refuses it without allocating."""
    g0, g1 = _groups(2)
    r1 = _InThread(lambda: g1.all_reduce_array(np.ones(2, np.float32)))
    sock = g0._peers[1]
    assert read_frame(sock)[0]["shape"] == [2]  # rank 1's contribution
    sock.sendall(raw_frame({**F4, "shape": [2]}, b"", 1 << 40))
    err, _ = r1()
    assert isinstance(err, CollectiveError)
    assert "rank 0 announced 1099511627776 bytes for float32 [2]" in str(err)
    g0.close()
    g1.close()


def test_a_trickling_rank_times_out_on_the_whole_message():
    """The deadline covers the whole frame, not each recv: a joined rank sending one byte per
    0.2 s cannot hold rank 0 past its 1 s timeout."""
    g0, g1 = _groups(2, timeout=1.0)
    result = _InThread(lambda: g0.all_reduce_array(np.ones(2, np.float32)))
    sock = g1._peers[0]
    stop = time.monotonic() + 4.0
    for b in raw_frame({**F4, "shape": [2]}, b"\0" * 8):
        if time.monotonic() > stop:
            break
        try:
            sock.send(bytes([b]))
        except OSError:
            break
        time.sleep(0.2)
        if result.done():  # rank 0 gave up: stop
            break
    err, seconds = result()
    assert isinstance(err, CollectiveError) and "timed out waiting for rank 1" in str(err)
    assert seconds < 2.5
    g0.close()
    g1.close()


CHILD = r"""
import json, resource, sys
import numpy as np
from burn_tensor.collective import CollectiveError, ProcessGroup

def peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux

out = {"base_mib": peak_mib()}
try:
    g = ProcessGroup.connect(0, 2, "127.0.0.1", int(sys.argv[1]), timeout=4)
    out["joined"] = True
    try:
        g.all_reduce_array(np.ones(2, np.float32))
    except CollectiveError as err:
        out["error"] = str(err)
except BaseException as err:
    out["raised"] = f"{type(err).__name__}: {err}"
out["peak_mib"] = peak_mib()
print(json.dumps(out), flush=True)
"""


@pytest.mark.parametrize("claimed", [2**31, 2**63])
def test_length_bombs_stay_within_64_mib(claimed):
    """F6 in a fresh rank 0 process: a stranger's 24-byte join frame announcing a `claimed`-
    byte payload during the rendezvous, then the real rank 1 joins and announces `claimed`
    bytes for its 8-byte gradient. Rank 0 refuses both before allocating: its peak RSS grows
    by less than 64 MiB, and the error names rank 1."""
    port = free_port()
    env = {**os.environ, "BURN_COLLECTIVE_TOKEN": TOKEN}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(port)], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        stranger = dial(port)
        stranger.sendall(raw_frame({"rank": 1, "world_size": 2}, claimed=claimed))
        r1 = Rank(1, 2, port, timeout=4).join()
        assert r1.error is None, r1.error
        sock = r1.group._peers[0]
        sock.sendall(raw_frame({**F4, "shape": [2]}, b"", claimed))
        reply = read_frame(sock)
        out, _ = child.communicate(timeout=30)
    finally:
        child.kill()
    report = json.loads(out.strip().splitlines()[-1])
    print(f"rank 0 peak RSS {report['peak_mib']:.1f} MiB (after imports {report['base_mib']:.1f})")
    assert report.get("joined") and "raised" not in report, report
    assert f"rank 1 announced {claimed} bytes for float32 [2]" in report["error"]
    assert reply is not None and "rank 1 announced" in reply[0]["error"]
    assert report["peak_mib"] - report["base_mib"] < 64, report
    stranger.close()
    r1.group.close()
