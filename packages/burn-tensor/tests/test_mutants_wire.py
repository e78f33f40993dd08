"""Tests written for mutants of the collectives' framing that the suite let survive
(tools/mutation): the header cap is inclusive, and a deadline already passed is a
CollectiveError before any socket call."""

from __future__ import annotations

import json
import socket
import time

import pytest
from burn_tensor.collective import CollectiveError
from burn_tensor.collective._wire import exact, frame, recv_header


def test_a_header_of_exactly_the_cap_is_accepted_one_byte_more_is_not():
    header = {"op": "all_reduce", "pad": ""}
    size = len(json.dumps(header).encode())
    for cap, ok in ((size, True), (size - 1, False)):
        a, b = socket.socketpair()
        try:
            a.sendall(frame(header, 0))
            deadline = time.monotonic() + 5.0
            if ok:
                assert recv_header(b, "rank 1", deadline, max_header=cap) == (header, 0)
            else:
                with pytest.raises(CollectiveError, match=f"{size}-byte header"):
                    recv_header(b, "rank 1", deadline, max_header=cap)
        finally:
            a.close()
            b.close()


def test_a_deadline_already_passed_times_out_as_a_collective_error():
    a, b = socket.socketpair()
    try:
        a.sendall(b"\x00" * 8)  # data is there: only the deadline can stop the read
        with pytest.raises(CollectiveError, match="timed out waiting for rank 1"):
            exact(b, 8, "rank 1", time.monotonic() - 0.5)
    finally:
        a.close()
        b.close()
