"""Collectives: ThreadGroup (devices of one process) and ProcessGroup (TCP, here with its ranks
in threads of one process), values against numpy, errors, and the autodiff rule."""

from __future__ import annotations

import secrets

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_tensor import Tensor
from burn_tensor.collective import (
    CollectiveError,
    ProcessGroup,
    ThreadGroup,
    all_gather,
    all_reduce,
    broadcast,
)
from burn_backend_tests import run_ranks

RNG = np.random.default_rng(0)


def _process_comms(n):
    """n ProcessGroup communicators connected over localhost (ranks in threads)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(16)
    return run_ranks(
        n, lambda r: ProcessGroup.connect(r, n, "127.0.0.1", port, timeout=30, token=token)
    )


def _groups(n):
    backend = NdArray(num_devices=n)
    devices = [backend.device(i) for i in range(n)]
    g = ThreadGroup(devices)
    yield "threads", devices, [g.communicator(r) for r in range(n)]
    comms = _process_comms(n)
    yield "tcp", [NdArray().device(0)] * n, comms
    for c in comms:
        c.close()


@pytest.mark.parametrize("n", [1, 2, 3])
def test_all_reduce_broadcast_all_gather_against_numpy(n):
    xs = [RNG.standard_normal((3, 4)).astype(np.float32) for _ in range(n)]
    for kind, devices, comms in _groups(n):

        def work(r, devices=devices, comms=comms):
            t = Tensor.from_data(xs[r], devices[r])
            s = all_reduce(t, comms[r], "sum")
            m = all_reduce(t, comms[r], "mean")
            b = broadcast(t, comms[r], n - 1)
            g = all_gather(t, comms[r])
            assert s.device == devices[r] and b.device == devices[r]
            return s.numpy(), m.numpy(), b.numpy(), [x.numpy() for x in g]

        results = run_ranks(n, work)
        want = np.sum(np.stack(xs).astype(np.float64), axis=0)
        for r, (s, m, b, g) in enumerate(results):
            np.testing.assert_allclose(s, want, rtol=1e-6, atol=1e-6, err_msg=kind)
            np.testing.assert_allclose(m, want / n, rtol=1e-6, atol=1e-6, err_msg=kind)
            np.testing.assert_array_equal(b, xs[n - 1])
            for got, x in zip(g, xs):
                np.testing.assert_array_equal(got, x)
            # every rank gets bitwise the same sum
            np.testing.assert_array_equal(s, results[0][0])


def test_shape_mismatch_names_both_ranks():
    for kind, devices, comms in _groups(2):
        shapes = [(2,), (3,)]

        def work(r, devices=devices, comms=comms):
            return all_reduce(Tensor.zeros(list(shapes[r]), devices[r]), comms[r])

        with pytest.raises(CollectiveError, match=r"rank 0 gave float32 \[2\], rank 1 gave"):
            run_ranks(2, work)


def test_a_failing_rank_releases_the_others():
    backend = NdArray(num_devices=2)
    g = ThreadGroup([backend.device(0), backend.device(1)], timeout=60)

    def work(r):
        if r == 1:
            g.abort("rank 1 failed: boom")
            raise RuntimeError("boom")
        return all_reduce(Tensor.ones([2], backend.device(0)), g.communicator(0))

    with pytest.raises((CollectiveError, RuntimeError)):
        run_ranks(2, work)
    with pytest.raises(CollectiveError, match="rank 1 failed: boom"):
        all_reduce(Tensor.ones([2], backend.device(0)), g.communicator(0))


def test_rank_of_a_dead_process_is_named():
    comms = _process_comms(2)
    comms[1].close()
    with pytest.raises(CollectiveError, match="rank 1 closed the connection"):
        comms[0].all_reduce_array(np.zeros(2, np.float32))
    comms[0].close()


def test_all_reduce_is_differentiable():
    """Rank r computes y = all_reduce(x_r * w_r) and loss_r = sum(y): every loss depends on
    every w, so dloss_r/dw_r through the all-reduce is n * x_r (each of the n losses counts)."""
    from burn_autodiff import Autodiff

    n = 2
    backend = Autodiff(NdArray(num_devices=n))
    devices = [backend.device(i) for i in range(n)]
    g = ThreadGroup(devices)
    xs = [RNG.standard_normal(4).astype(np.float32) for _ in range(n)]

    def work(r):
        x = Tensor.from_data(xs[r], devices[r])
        w = Tensor.ones([4], devices[r]).require_grad()
        y = all_reduce(x * w, g.communicator(r), "sum")
        grads = y.sum().backward()
        return y.numpy(), w.grad(grads).numpy()

    results = run_ranks(n, work)
    for r, (y, gw) in enumerate(results):
        np.testing.assert_allclose(y, xs[0] + xs[1], rtol=1e-6)
        np.testing.assert_allclose(gw, n * xs[r], rtol=1e-6)
