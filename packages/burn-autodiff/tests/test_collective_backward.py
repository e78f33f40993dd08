"""The backward of `all_reduce` under Autodiff, for every op, against hand-derived gradients.

Rank r holds data a_r and c_r and a parameter w_r (ones), computes

    y = all_reduce(a_r * w_r, op)          (the same y on every rank)
    loss_r = sum(c_r * y)

The ranks together minimise L = sum_r loss_r, and each rank's backward gives dL/dw_r:

    sum:  y = sum_s a_s * w_s        dL/dw_r = a_r * sum_s c_s
    mean: y = (1/n) sum_s a_s * w_s  dL/dw_r = a_r * (1/n) sum_s c_s

The c_r differ per rank, so a backward that sums where it should average (a factor n), that
returns the local gradient without reducing it (a_r * c_r), or that reduces with the wrong op
gives another number. Checked on both kinds of group, against numpy float64.
"""

from __future__ import annotations

import secrets
import socket

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_ndarray import NdArray
from burn_tensor import Tensor
from burn_tensor.collective import ProcessGroup, ThreadGroup, all_reduce
from burn_backend_tests import run_ranks


def _group(kind: str, n: int):
    """(Autodiff devices, communicators, closer) of a group of n."""
    if kind == "threads":
        backend = Autodiff(NdArray(num_devices=n))
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
    return [Autodiff(NdArray()).device(0)] * n, comms


def _expected(op: str, a: list[np.ndarray], c: list[np.ndarray], n: int):
    """(y, [dL/dw_r]) by the formulas of the module docstring, in float64."""
    a64 = [x.astype(np.float64) for x in a]
    c64 = [x.astype(np.float64) for x in c]
    scale = 1.0 / n if op == "mean" else 1.0
    y = scale * np.sum(a64, axis=0)
    csum = scale * np.sum(c64, axis=0)
    return y, [a64[r] * csum for r in range(n)]


@pytest.mark.parametrize("kind", ["threads", "tcp"])
@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("op", ["sum", "mean"])
def test_all_reduce_backward_matches_the_hand_derived_gradient(kind, n, op):
    rng = np.random.default_rng(10 * n + len(op))
    a = [rng.standard_normal(5).astype(np.float32) for _ in range(n)]
    c = [rng.uniform(0.5, 2.0, 5).astype(np.float32) for _ in range(n)]
    devices, comms = _group(kind, n)

    def work(r):
        w = Tensor.ones([5], devices[r]).require_grad()
        y = all_reduce(Tensor.from_data(a[r], devices[r]) * w, comms[r], op)
        loss = (Tensor.from_data(c[r], devices[r]) * y).sum()
        grads = loss.backward()
        return y.numpy(), w.grad(grads).numpy()

    try:
        results = run_ranks(n, work)
    finally:
        for comm in comms:
            getattr(comm, "close", lambda: None)()
    want_y, want_g = _expected(op, a, c, n)
    for r, (y, g) in enumerate(results):
        np.testing.assert_allclose(y, want_y, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(g, want_g[r], rtol=1e-5, atol=1e-6)


def test_mean_backward_is_the_sum_divided_by_the_world_size():
    """The two ops' gradients differ by exactly n (a mean backward that summed would equal the
    sum's): computed side by side on one group of 3."""
    n = 3
    backend = Autodiff(NdArray(num_devices=n))
    devices = [backend.device(i) for i in range(n)]
    group = ThreadGroup(devices)
    a = [np.full(2, r + 1.0, np.float32) for r in range(n)]
    c = [np.full(2, 10.0**r, np.float32) for r in range(n)]

    def work(r):
        out = {}
        for op in ("sum", "mean"):
            w = Tensor.ones([2], devices[r]).require_grad()
            y = all_reduce(Tensor.from_data(a[r], devices[r]) * w, group.communicator(r), op)
            grads = (Tensor.from_data(c[r], devices[r]) * y).sum().backward()
            out[op] = w.grad(grads).numpy()
        return out

    for r, got in enumerate(run_ranks(n, work)):
        # sum_s c_s = 1 + 10 + 100 = 111; rank r's a is r + 1
        np.testing.assert_allclose(got["sum"], [111.0 * (r + 1)] * 2, rtol=1e-6)
        np.testing.assert_allclose(got["mean"], [37.0 * (r + 1)] * 2, rtol=1e-6)
