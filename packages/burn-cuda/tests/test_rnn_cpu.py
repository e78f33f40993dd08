"""Cuda's `rnn_sequence` as burn_gpu's `rnn_steps` kernel, its CUDA C text run on the CPU
stand-in (`cpu_backend.py`: g++, the launcher's real grid, block and parameter slots) from
`burn_tensor.module.rnn_sequence`: exactly one `rnn_steps` launch per layer (the projection is
the backend's matmul, numpy's here), values against the conformance suite's float64 reference
for an LSTM with peepholes and clip (65 units), a bidirectional GRU without and with
linear_before_reset, a GRU of 260 units (threads owning two), a reverse RNN with relu, and
bfloat16 storage. GPU runs: `test_rnn_gpu.py`."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu
from burn_backend_tests.suites.rnn import random_layer, reference
from burn_tensor import Tensor, module
from cpu_backend import cuda_on_cpu_backend
from fake_cupy import FakeCupy

pytestmark = pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed")

# (kind, seq, batch, in, hidden, direction, activations, clip, linear_before_reset, peepholes)
CASES = [
    ("LSTM", 5, 2, 3, 65, "forward", None, 0.8, 0, True),
    ("GRU", 4, 3, 4, 7, "bidirectional", None, None, 0, False),
    ("GRU", 3, 1, 2, 5, "bidirectional", None, 1.5, 1, False),
    ("GRU", 2, 1, 2, 260, "forward", None, None, 0, False),  # 256 threads: some own two units
    ("RNN", 4, 2, 3, 6, "reverse", ["relu"], None, 0, False),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[4]}-{c[5]}" for c in CASES])
def test_rnn_sequence_runs_one_kernel_launch(case):
    kind, seq, batch, n_in, hs, direction, acts, clip, lbr, peep = case
    dirs = 2 if direction == "bidirectional" else 1
    acts = None if acts is None else acts * dirs
    a = random_layer(kind, seq, batch, n_in, hs, direction, peep, seed=hs)
    names = ("x", "w", "r", "b", "h0", "c0", "p")
    with cuda_on_cpu_backend(FakeCupy()) as (B, cp):
        dev = B.device()
        ts = [None if a[n] is None else Tensor.from_data(a[n], dev) for n in names]
        got = module.rnn_sequence(
            kind, *ts, direction=direction, activations=acts, clip=clip, linear_before_reset=lbr
        )
        got = [None if t is None else np.asarray(t.into_data().array, np.float64) for t in got]
        launched = [launch.name for launch in cp.launches if launch.name == "rnn_steps"]
    assert launched == ["rnn_steps"]
    want = reference(
        kind, *(None if a[n] is None else a[n].astype(np.float64) for n in names), direction,
        acts, clip, lbr, 0,
    )  # fmt: skip
    for name, gv, wv in zip(("y", "y_h", "y_c"), got, want):
        if kind != "LSTM" and name == "y_c":
            assert gv is None
            continue
        np.testing.assert_allclose(gv, wv, rtol=2e-5, atol=2e-6, err_msg=name)


# bfloat16 only: float16 differs in its two conversion helpers, which the other half kernels'
# tests cover (a third g++ build of the program is ~1.5 s of CI)
@pytest.mark.parametrize("dtype", ["bfloat16"])
def test_half_storage_runs_the_kernel_natively(dtype):
    """A half Cuda(): `rnn_steps` reads and writes the half buffers itself (float32 state and
    gate math, each output rounded once): one launch, values within the half's rounding of the
    float64 reference on the half-rounded inputs."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    np_half = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16}[dtype]
    rng = np.random.default_rng(5)
    hs, seq, batch = 9, 6, 2
    shapes = {"x": (seq, batch, 3), "w": (1, 4 * hs, 3), "r": (1, 4 * hs, hs), "b": (1, 8 * hs)}
    a = {k: (rng.standard_normal(s) * 0.5).astype(np.float32) for k, s in shapes.items()}
    with cuda_on_cpu_backend(FakeCupy(), float_dtype=dtype) as (B, cp):
        dev = B.device()
        ts = [Tensor.from_data(a[n], dev).cast(dtype) for n in ("x", "w", "r", "b")]
        got = module.rnn_sequence("LSTM", *ts)
        assert str(got[0].dtype) == str(ts[0].dtype)
        got = [np.asarray(t.cast("float32").into_data().array, np.float64) for t in got]
        launched = [launch.name for launch in cp.launches if launch.name == "rnn_steps"]
    assert launched == ["rnn_steps"]
    r = {k: v.astype(np_half).astype(np.float64) for k, v in a.items()}  # what the half holds
    want = reference("LSTM", r["x"], r["w"], r["r"], r["b"], None, None, None, "forward", None,
                     None, 0, 0)  # fmt: skip
    tol = {"bfloat16": 3e-2, "float16": 4e-3}[dtype]
    for name, gv, wv in zip(("y", "y_h", "y_c"), got, want):
        np.testing.assert_allclose(gv, wv, rtol=tol, atol=tol, err_msg=name)
