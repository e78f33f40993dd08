"""all_reduce_async: several reductions in flight, results equal to all_reduce and in start
order; an error in a background reduction reaches wait() and leaves the group failed."""

from __future__ import annotations

import secrets
import socket

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_tensor import Tensor
from burn_tensor.collective import CollectiveError, ProcessGroup, all_reduce_async
from burn_backend_tests import run_ranks


def _comms(n, timeout=30):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(16)
    return run_ranks(
        n, lambda r: ProcessGroup.connect(r, n, "127.0.0.1", port, timeout=timeout, token=token)
    )


@pytest.mark.parametrize("n", [2, 3])
def test_async_reductions_equal_sync_ones(n):
    rng = np.random.default_rng(1)
    xs = [[rng.standard_normal(s).astype(np.float32) for s in (5, 7, 3)] for _ in range(n)]
    comms = _comms(n)
    d = NdArray().device(0)

    def work(r):
        works = [all_reduce_async(Tensor.from_data(x, d), comms[r]) for x in xs[r]]
        got = [w.wait().numpy() for w in works]
        sync = [comms[r].all_reduce(Tensor.from_data(x, d)).numpy() for x in xs[r]]
        return got, sync

    try:
        results = run_ranks(n, work)
    finally:
        for c in comms:
            c.close()
    for j in range(3):
        want = np.stack([xs[r][j] for r in range(n)]).astype(np.float64).sum(0)
        for got, sync in results:
            np.testing.assert_array_equal(got[j], sync[j])  # bitwise the sync path
            np.testing.assert_array_equal(got[j], results[0][0][j])  # same on every rank
            np.testing.assert_allclose(got[j], want, rtol=1e-6, atol=1e-6)


def test_async_error_reaches_wait_and_breaks_group():
    comms = _comms(2, timeout=5)
    d = NdArray().device(0)

    def work(r):
        shape = (3,) if r == 0 else (4,)
        w = all_reduce_async(Tensor.from_data(np.ones(shape, np.float32), d), comms[r])
        with pytest.raises(CollectiveError, match="shape"):
            w.wait()
        with pytest.raises(CollectiveError, match="failed earlier"):
            comms[r].barrier()
        return True

    try:
        assert run_ranks(2, work) == [True, True]
    finally:
        for c in comms:
            c.close()
