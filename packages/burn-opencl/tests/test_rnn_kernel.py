"""OpenCl's `rnn_sequence` through burn_gpu's `rnn_steps` kernel (`GpuRnnOps`): the conformance
suite's rnn cases with the contract's default made to raise (so each passes only through the
kernel, exactly one launch per layer), then odd sizes against the suite's float64 numpy
reference: hidden 1 / 7 / 65 / 300 (a unit per item; 300: items owning two units), batch 1 / 3,
sequence 1 / 9, bidirectional, LSTM with peepholes and clip, GRU with linear_before_reset 0 / 1;
Fusion of OpenCl delegating to the kernel; a hidden size past `RNN_HMAX` taking the default.

One program per dtype (float32; float64 through the suite's f64 config), built once by PoCL.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from burn_backend_tests.suites.rnn import CASES, random_layer, reference
from burn_backend_tests.suites.rnn import test_rnn_sequence as _suite_case
from burn_gpu import RNN_HMAX
from burn_opencl import OpenCl
from burn_opencl._gpu_runtime import OpenClRuntime
from burn_tensor import Tensor, module
from burn_tensor._ops_rnn import RnnOps

DEVICE_TYPE = os.environ.get("BURN_OPENCL_TEST_DEVICE_TYPE", "cpu")


@pytest.fixture
def launches(monkeypatch):
    """Launches of `rnn_steps` (a list, one entry each); the default raises when reached."""
    seen = []
    call = OpenClRuntime.call

    def counting(self, kernel, items, args, group=None, flat=False):
        if kernel.function_name == "rnn_steps":
            seen.append(items)
        return call(self, kernel, items, args, group, flat)

    def default(*a, **k):
        raise AssertionError("rnn_sequence took the per-step default, not the kernel")

    monkeypatch.setattr(OpenClRuntime, "call", counting)
    monkeypatch.setattr(RnnOps, "rnn_sequence", default)
    return seen


@pytest.mark.parametrize("cid", [c[0] for c in CASES])
def test_suite_case_runs_the_kernel(burn, cid, launches):
    """The suite's case `cid`, through the kernel only (one launch)."""
    _suite_case(burn, cid)
    assert len(launches) == 1


@pytest.fixture(scope="module")
def device():
    try:
        return OpenCl(device_type=DEVICE_TYPE).device()
    except Exception as exc:  # noqa: BLE001 - no OpenCL CPU device here
        pytest.skip(f"no OpenCL {DEVICE_TYPE} device: {exc}")


def _run(device, kind, seq, batch, n_in, hs, direction, clip=None, lbr=0, peep=False, seed=0):
    """(got, want): the op on `device` and the float64 reference, inputs of one seed."""
    a = random_layer(kind, seq, batch, n_in, hs, direction, peep, seed)
    a = {k: None if v is None else v.astype(np.float64) for k, v in a.items()}
    ts = {
        k: None if v is None else Tensor.from_data(v.astype(np.float32), device)
        for k, v in a.items()
    }
    names = ("x", "w", "r", "b", "h0", "c0", "p")
    got = module.rnn_sequence(
        kind, *(ts[n] for n in names), direction=direction, clip=clip, linear_before_reset=lbr
    )
    want = reference(kind, *(a[n] for n in names), direction, None, clip, lbr, 0)
    got = [None if t is None else np.asarray(t.into_data().array, np.float64) for t in got]
    return got, want


# (kind, seq, batch, in, hidden, direction, clip, linear_before_reset, peepholes)
ODD = [
    ("LSTM", 9, 3, 5, 1, "bidirectional", 0.8, 0, True),
    ("LSTM", 9, 1, 3, 65, "forward", 0.8, 0, True),  # 65 units: a group of 128 items
    ("LSTM", 1, 3, 4, 7, "reverse", None, 0, False),
    ("GRU", 9, 3, 4, 7, "bidirectional", None, 0, False),
    ("GRU", 9, 1, 6, 65, "reverse", 1.5, 0, False),
    ("GRU", 1, 3, 2, 65, "bidirectional", None, 1, False),
    ("GRU", 9, 3, 7, 1, "forward", None, 1, False),
    ("RNN", 9, 3, 4, 65, "bidirectional", 0.9, 0, False),
    ("GRU", 3, 1, 2, 300, "forward", None, 0, False),  # 300 units, 256 items: some own two
]


@pytest.mark.parametrize("case", ODD, ids=["-".join(map(str, c)) for c in ODD])
def test_odd_sizes_match_float64(device, launches, case):
    got, want = _run(device, *case[:6], clip=case[6], lbr=case[7], peep=case[8], seed=len(launches))
    assert len(launches) == 1
    for name, g, w in zip(("y", "y_h", "y_c"), got, want):
        if case[0] != "LSTM" and name == "y_c":
            assert g is None
            continue
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6, err_msg=name)


def test_fusion_of_opencl_runs_the_kernel(launches):
    """Fusion delegates `rnn_sequence` to OpenCl's kernel (it does not run the default's steps
    on its stream)."""
    fusion = pytest.importorskip("burn_fusion")
    try:
        dev = fusion.Fusion(OpenCl(device_type=DEVICE_TYPE)).device()
    except Exception as exc:  # noqa: BLE001 - no OpenCL device here
        pytest.skip(f"no OpenCL {DEVICE_TYPE} device: {exc}")
    got, want = _run(dev, "GRU", 4, 2, 3, 7, "forward", lbr=1)
    assert len(launches) == 1
    np.testing.assert_allclose(got[0], want[0], rtol=2e-5, atol=2e-6)


def test_hidden_past_the_local_memory_takes_the_default(device, monkeypatch):
    """More than RNN_HMAX units: the default's steps (no launch), still the reference's values."""
    seen = []
    call = OpenClRuntime.call

    def counting(self, kernel, items, args, group=None, flat=False):
        seen.append(kernel.function_name)
        return call(self, kernel, items, args, group, flat)

    monkeypatch.setattr(OpenClRuntime, "call", counting)
    got, want = _run(device, "RNN", 2, 1, 2, RNN_HMAX + 1, "forward")
    assert "rnn_steps" not in seen
    np.testing.assert_allclose(got[0], want[0], rtol=2e-5, atol=2e-5)
