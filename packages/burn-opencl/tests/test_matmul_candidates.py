"""Every matmul tile, from an empty cache, on odd, tiny, transposed, misaligned and batched
problems in f32 and f64: results against numpy float64, and no candidate may crash the process.

A fresh machine once died here with SIGSEGV: the CPU tile's double8 vectors crash PoCL's LLVM
at the kernel's first launch, and warm autotune caches (which skip timing the candidates) hid
it. The sweep runs in a child process with every cache folder new and empty, so a crash is a
failed test with the child's output, not the end of the test run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from burn_opencl import OpenCl
from burn_opencl._matmul import CANDIDATES, CPU_VECTOR_BYTES, candidates

DEVICE_TYPE = os.environ.get("BURN_OPENCL_TEST_DEVICE_TYPE", "cpu")
SWEEP = Path(__file__).with_name("_candidate_sweep.py")
TOL = {"float32": 1e-4, "float64": 1e-12}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    root = tmp_path_factory.mktemp("empty-caches")
    env = dict(os.environ)
    env.pop("BURN_CACHE_DIR", None)
    env.pop("BURN_AUTOTUNE", None)  # autotune on: the candidates must be timed, not skipped
    env.pop("BURN_OPENCL_BUILD_OPTIONS", None)  # optimized builds, as users run them (the crash)
    for var in ("XDG_CACHE_HOME", "POCL_CACHE_DIR", "CUPY_CACHE_DIR"):
        env[var] = str(root / var.lower())
    proc = subprocess.run(
        [sys.executable, str(SWEEP), DEVICE_TYPE],
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return proc, rows


def test_the_sweep_finishes_without_a_crash(sweep):
    proc, rows = sweep
    tail = (proc.stdout[-3000:] + proc.stderr[-3000:]).strip()
    assert proc.returncode == 0, f"candidate sweep died with {proc.returncode}:\n{tail}"
    assert rows and rows[-1] == {"done": True}, tail


def test_every_tile_is_correct_on_every_problem(sweep):
    _, rows = sweep
    checked = [r for r in rows if "err" in r and r["tile"] != "None"]
    dtypes = {r["dtype"] for r in checked}
    assert "float32" in dtypes
    bad = [r for r in checked if not (r["err"] < TOL[r["dtype"]]) or r["got_shape"] != r["want_shape"]]
    assert not bad, f"{len(bad)} of {len(checked)} wrong, e.g. {bad[:3]}"
    # every tile this device is offered ran in each dtype, and in float64 every candidate of
    # any device kind (a CPU tile only at its dtype's vector width)
    rt = OpenCl(DEVICE_TYPE)._rt(None)
    for dt in dtypes:
        size = np.dtype(dt).itemsize
        want = {repr(t) for t in candidates(rt, size)}
        if dt == "float64":
            want |= {repr(t) for t in CANDIDATES if not t.cpu or t.tn * size == CPU_VECTOR_BYTES}
        assert {r["tile"] for r in checked if r["dtype"] == dt} == want


def test_the_autotuned_path_from_an_empty_cache_is_correct(sweep):
    _, rows = sweep
    tuned = [r for r in rows if r.get("tile") == "None"]
    assert tuned, "the sweep ran no autotuned problem"
    assert len({r["dtype"] for r in tuned}) == len({r["dtype"] for r in rows if "dtype" in r})
    assert all(len(r["offered"]) > 1 for r in tuned), "autotune had nothing to choose from"
    bad = [r for r in tuned if not r["err"] < TOL[r["dtype"]]]
    assert not bad, bad[:3]


def test_cpu_tiles_never_use_vectors_wider_than_256_bits():
    # PoCL 3.0's compiler crashes on double8 (512-bit) lanes: the f64 CPU tiles use double4
    rt = OpenCl(DEVICE_TYPE)._rt(None)
    for size in (4, 8):
        for t in candidates(rt, size):
            if t.cpu:
                assert t.tn * size == CPU_VECTOR_BYTES, t
    if rt.kind == "cpu":
        assert any(t.cpu for t in candidates(rt, 8)), "float64 lost its CPU tiles"
        assert any(t.cpu for t in candidates(rt, 4)), "float32 lost its CPU tiles"
