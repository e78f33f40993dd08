"""Tests written for mutants of the collectives that the suite let survive (tools/mutation):
the header and dtype-name caps are inclusive, a deadline already passed is a CollectiveError
before any socket call, and a broadcast root must be a rank."""

from __future__ import annotations

import json
import socket
import struct
import time
import types

import numpy as np
import pytest
from burn_tensor.collective import CollectiveError, ProcessGroup
from burn_tensor.collective import _wire
from burn_tensor.collective._wire import array_spec, exact, frame, recv_header


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


def test_a_dtype_name_of_sixteen_characters_is_parsed_seventeen_are_refused():
    assert array_spec({"dtype": "timedelta64[10s]", "shape": [2]}, "rank 1")[1] == (2,)
    with pytest.raises(CollectiveError, match="malformed dtype"):
        array_spec({"dtype": "timedelta64[100s]", "shape": [2]}, "rank 1")


def test_process_group_broadcast_root_must_be_a_rank():
    group = ProcessGroup.connect(0, 1, "127.0.0.1", 0)
    try:
        for root in (1, -1):
            with pytest.raises(ValueError, match=f"root {root} is not a rank of a group of 1"):
                group.broadcast_array(np.zeros(2), root=root)
        np.testing.assert_array_equal(group.broadcast_array(np.ones(2)), np.ones(2))  # root 0
    finally:
        group.close()


@pytest.mark.parametrize("name", ["f4,f4", "(2,)f4"], ids=["structured", "subarray"])
def test_structured_and_subarray_dtypes_are_refused(name):
    with pytest.raises(CollectiveError, match="only plain numeric arrays travel"):
        array_spec({"dtype": name, "shape": [2]}, "rank 1")


def test_a_shape_of_sixty_four_dims_is_accepted_and_a_negative_dim_refused():
    assert array_spec({"dtype": "<f4", "shape": [1] * 64}, "rank 1")[1] == (1,) * 64
    with pytest.raises(CollectiveError, match="a dimension is negative"):
        array_spec({"dtype": "<f4", "shape": [2, -1]}, "rank 1")


def test_a_reset_connection_is_a_collective_error_naming_the_peer():
    # the peer process dies mid-message: its kernel resets the TCP connection (RST), and
    # recv raises ConnectionResetError, which must surface as a CollectiveError
    server = socket.create_server(("127.0.0.1", 0))
    try:
        client = socket.create_connection(server.getsockname())
        peer, _ = server.accept()
        peer.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        peer.sendall(b"\x00\x00")  # half of the 4 bytes expected
        peer.close()
        time.sleep(0.05)
        with pytest.raises(CollectiveError, match="lost the connection to rank 1"):
            exact(client, 4, "rank 1", time.monotonic() + 5.0)
        client.close()
    finally:
        server.close()


def test_a_deadline_reached_exactly_is_a_timeout(monkeypatch):
    # no time left (0.0, not just below it) is a timeout, not a non-blocking read
    now = 1000.0
    monkeypatch.setattr(_wire, "time", types.SimpleNamespace(monotonic=lambda: now))
    a, b = socket.socketpair()
    try:
        a.sendall(b"\x00" * 4)
        with pytest.raises(CollectiveError, match="timed out waiting for rank 1"):
            exact(b, 4, "rank 1", now)
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize("name", [None, 5, ["<f4"], {"names": ["a"], "formats": ["<f4"]}])
def test_a_dtype_that_is_not_a_string_is_malformed(name):
    with pytest.raises(CollectiveError, match="malformed dtype"):
        array_spec({"dtype": name, "shape": [2]}, "rank 1")
