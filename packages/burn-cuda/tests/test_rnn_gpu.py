"""Cuda's `rnn_sequence` on the GPU (skips without one) through burn_gpu's `rnn_steps` kernel:
the conformance suite's rnn cases (f32 and f64) with the contract's per-step default made to
raise, so each passes only through the kernel; then GPU-sized layers (hidden 512 with 256
threads owning two units each, batch 32, 100 steps; an LSTM with peepholes and clip, a
bidirectional GRU) against the suite's float64 reference. The CPU stand-in runs the same
kernel text in test_rnn_cpu.py."""

from __future__ import annotations

import numpy as np
import pytest
from burn_backend_tests.suites.rnn import CASES, random_layer, reference
from burn_backend_tests.suites.rnn import test_rnn_sequence as _suite_case
from burn_tensor import Tensor, module
from burn_tensor._ops_rnn import RnnOps

pytestmark = pytest.mark.gpu


@pytest.fixture
def no_default(monkeypatch):
    def default(*a, **k):
        raise AssertionError("rnn_sequence took the per-step default, not the kernel")

    monkeypatch.setattr(RnnOps, "rnn_sequence", default)


@pytest.mark.parametrize("cid", [c[0] for c in CASES])
def test_suite_case_runs_the_kernel(burn, cid, no_default):
    _suite_case(burn, cid)


@pytest.mark.parametrize(
    "kind, direction, clip, lbr, peep",
    [("LSTM", "forward", 3.0, 0, True), ("GRU", "bidirectional", None, 0, False)],
)
def test_gpu_sized_layers_match_float64(cuda_ready, no_default, kind, direction, clip, lbr, peep):
    from burn_cuda import Cuda

    dev = Cuda().device()
    seq, batch, n_in, hs = 100, 32, 64, 512
    a = random_layer(kind, seq, batch, n_in, hs, direction, peep, seed=7, w_scale=1 / np.sqrt(n_in))
    names = ("x", "w", "r", "b", "h0", "c0", "p")
    ts = [None if a[n] is None else Tensor.from_data(a[n], dev) for n in names]
    got = module.rnn_sequence(kind, *ts, direction=direction, clip=clip, linear_before_reset=lbr)
    want = reference(
        kind, *(None if a[n] is None else a[n].astype(np.float64) for n in names), direction,
        None, clip, lbr, 0,
    )  # fmt: skip
    for name, gv, wv in zip(("y", "y_h", "y_c"), got, want):
        if gv is None:
            continue
        gv = np.asarray(gv.into_data().array, np.float64)
        np.testing.assert_allclose(gv, wv, rtol=1e-4, atol=1e-4, err_msg=name)
