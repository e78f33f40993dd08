"""Cuda's `rnn_sequence` on the GPU (skips without one) through burn_gpu's `rnn_steps` kernel:
the conformance suite's rnn cases (f32 and f64) with the contract's per-step default made to
raise, so each passes only through the kernel; then GPU-sized layers (hidden 512 with 256
threads owning two units each, batch 32, 100 steps; an LSTM with peepholes and clip, a
bidirectional GRU) against the suite's float64 reference. The CPU stand-in runs the same
kernel text in test_rnn_cpu.py."""

from __future__ import annotations

import numpy as np
import pytest
from burn_backend_tests.suites.rnn import CASES, reference
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
    rng = np.random.default_rng(7)
    seq, batch, n_in, hs = 100, 32, 64, 512
    dirs, g = 2 if direction == "bidirectional" else 1, {"LSTM": 4, "GRU": 3}[kind]
    a = {
        "x": rng.standard_normal((seq, batch, n_in)),
        "w": rng.standard_normal((dirs, g * hs, n_in)) / np.sqrt(n_in),
        "r": rng.standard_normal((dirs, g * hs, hs)) / np.sqrt(hs),
        "b": rng.standard_normal((dirs, 2 * g * hs)) * 0.5,
        "h0": rng.standard_normal((dirs, batch, hs)) * 0.5,
        "c0": rng.standard_normal((dirs, batch, hs)) * 0.5 if kind == "LSTM" else None,
        "p": rng.standard_normal((dirs, 3 * hs)) * 0.5 if peep else None,
    }
    a = {k: None if v is None else v.astype(np.float32) for k, v in a.items()}
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
