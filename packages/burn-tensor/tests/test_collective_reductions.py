"""Every reduction `all_reduce` offers ("sum", "mean"), on both kinds of group (devices of one
process; TCP ranks in threads), for float and int tensors, against numpy float64; and an op
it does not offer is refused by every communicator instead of being summed."""

from __future__ import annotations

import secrets
import socket

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_tensor import DType, Tensor
from burn_tensor.collective import ProcessGroup, ThreadGroup, all_reduce
from burn_tensor.collective._group import OPS
from burn_backend_tests import run_ranks


def _comms(kind: str, n: int):
    """(devices, communicators) of a group of n."""
    if kind == "threads":
        backend = NdArray(num_devices=n)
        devices = [backend.device(i) for i in range(n)]
        group = ThreadGroup(devices)
        return devices, [group.communicator(r) for r in range(n)]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(16)
    comms = run_ranks(
        n, lambda r: ProcessGroup.connect(r, n, "127.0.0.1", port, timeout=30, token=token)
    )
    return [NdArray().device(0)] * n, comms


def _close(comms) -> None:
    for c in comms:
        if hasattr(c, "close"):
            c.close()


def test_the_api_offers_sum_and_mean():
    assert OPS == ("sum", "mean")


@pytest.mark.parametrize("kind", ["threads", "tcp"])
@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("op", OPS)
def test_float_reduction_against_numpy(kind, n, op):
    rng = np.random.default_rng(n)
    xs = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(n)]
    devices, comms = _comms(kind, n)
    try:
        results = run_ranks(
            n, lambda r: all_reduce(Tensor.from_data(xs[r], devices[r]), comms[r], op).numpy()
        )
    finally:
        _close(comms)
    total = np.sum([x.astype(np.float64) for x in xs], axis=0)
    want = total / n if op == "mean" else total
    for got in results:
        assert got.dtype == np.float32 and got.shape == (2, 3)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
        assert got.tobytes() == results[0].tobytes()  # bitwise the same on every rank


@pytest.mark.parametrize("kind", ["threads", "tcp"])
@pytest.mark.parametrize("op", OPS)
def test_int_reduction_truncates_toward_zero_like_burn(kind, op):
    """Int tensors stay int; an int mean truncates toward zero (Rust's division), on both
    kinds of group alike: (-3 + 0) / 2 = -1, (5 + 2) / 2 = 3."""
    xs = [np.array([-3, 5, 7], np.int64), np.array([0, 2, -8], np.int64)]
    devices, comms = _comms(kind, 2)
    try:
        results = run_ranks(
            2,
            lambda r: (
                all_reduce(Tensor.from_data(xs[r], devices[r], DType.I64), comms[r], op)
                .to_data()
                .numpy()
            ),
        )
    finally:
        _close(comms)
    want = {"sum": [-3, 7, -1], "mean": [-1, 3, 0]}[op]
    for got in results:
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kind", ["threads", "tcp"])
@pytest.mark.parametrize("op", ["max", "min", "product", "avg", "SUM"])
def test_an_op_the_api_does_not_offer_is_refused_by_every_communicator(kind, op):
    """Not only through `all_reduce(...)`: a communicator's own `all_reduce` used to sum
    whatever op it was given."""
    devices, comms = _comms(kind, 2)

    def work(r):
        t = Tensor.from_floats([1.0, 2.0], devices[r])
        with pytest.raises(ValueError, match=r"op must be one of \('sum', 'mean'\)"):
            comms[r].all_reduce(t, op)
        with pytest.raises(ValueError, match="op must be one of"):
            all_reduce(t, comms[r], op)
        return all_reduce(t, comms[r], "sum").numpy()  # the group is still usable

    try:
        results = run_ranks(2, work)
    finally:
        _close(comms)
    for got in results:
        np.testing.assert_array_equal(got, [2.0, 4.0])
