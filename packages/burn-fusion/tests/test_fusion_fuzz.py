"""Differential fuzzing of Fusion: random graphs of elementwise, reduction, layout and index ops
run on `Fusion(OpenCl())` (PoCL) and on `NdArray(float64)`, every value the user still holds
compared after every step (`_fuzz_steps.py` says what a step is, `_fuzz_graph.py` how values are
compared and why a held value is read behind Fusion's back).

Profiles (the repo's switch for long fuzz runs, as burn-record's and burn-dataset's):
- default (CI): seed 0, the first `CI_GRAPHS` graphs of `CI_STEPS` steps (one deck: every step
  kind runs in every graph); every graph is the same on every run, so its fused kernels come
  from the disk cache after the first run;
- `HYPOTHESIS_PROFILE=long`: `LONG_GRAPHS` graphs of `LONG_STEPS` steps, every fourth one on
  float64 (where the device has it). Run it after changing the stream, the renderers or the
  hooks: `HYPOTHESIS_PROFILE=long uv run pytest packages/burn-fusion/tests/test_fusion_fuzz.py -s`.
`BURN_FUSION_FUZZ_SEED`, `BURN_FUSION_FUZZ_GRAPHS`, `BURN_FUSION_FUZZ_STEPS` override the seed
and sizes (a failure names its graph and seed; its step log is in the message), and
`BURN_FUSION_FUZZ_OUT=path.json` writes the run's counters.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter

import pytest
from _fusion_testlib import inner_backend
from _fuzz_graph import GraphFailure
from _fuzz_steps import STEPS as STEP_KINDS
from _fuzz_steps import run_graph
from burn_fusion import Fusion
from burn_ndarray import NdArray
from burn_tensor import DType

LONG = os.environ.get("HYPOTHESIS_PROFILE") == "long"
CI_GRAPHS, CI_STEPS = 3, 13
LONG_GRAPHS, LONG_STEPS = 120, 20
SEED = int(os.environ.get("BURN_FUSION_FUZZ_SEED", "0"))
GRAPHS = int(os.environ.get("BURN_FUSION_FUZZ_GRAPHS", LONG_GRAPHS if LONG else CI_GRAPHS))
STEPS = int(os.environ.get("BURN_FUSION_FUZZ_STEPS", LONG_STEPS if LONG else CI_STEPS))


@pytest.fixture(scope="module")
def devices():
    """(Fusion f32 device, Fusion f64 device or None, the NdArray float64 reference device)."""
    f32 = Fusion(inner_backend("f32-i32")).device()
    f64 = None
    if LONG:
        try:
            f64 = Fusion(inner_backend("f64-i64")).device()
        except pytest.skip.Exception:  # no cl_khr_fp64: float64 graphs are left out
            f64 = None
    ref = NdArray(float_dtype="float64", int_dtype="int64").device()
    return f32, f64, ref


def _delta(dev, before: dict) -> dict:
    after = dev.fusion_stats()
    return {k: after[k] - before[k] for k in after}


def test_random_graphs_agree_with_ndarray(devices):
    f32, f64, ref = devices
    totals: Counter = Counter()
    failures: list[str] = []
    f32.sync()
    before = {id(d): d.fusion_stats() for d in (f32, f64) if d is not None}
    start = time.monotonic()
    for k in range(GRAPHS):
        dev, dt = (f64, DType.F64) if f64 is not None and k % 4 == 3 else (f32, DType.F32)
        try:
            g = run_graph(dev, ref, SEED, k, STEPS, dt)
        except GraphFailure as exc:
            failures.append(str(exc))
            continue
        for key, v in g.stats.items():
            totals[key] = max(totals[key], v) if key == "max_err_over_tol" else totals[key] + v
        totals[f"graphs_{dt.name}"] += 1
    fusion = Counter()
    for d in (f32, f64):
        if d is not None:
            fusion.update(_delta(d, before[id(d)]))
    report = {
        "seed": SEED,
        "graphs": GRAPHS,
        "steps_per_graph": STEPS,
        "failed_graphs": len(failures),
        "seconds": round(time.monotonic() - start, 1),
        "fuzzer": dict(sorted(totals.items())),
        "fusion_stats": dict(sorted(fusion.items())),
    }
    print("\nfusion fuzz:", json.dumps(report, indent=1))
    out = os.environ.get("BURN_FUSION_FUZZ_OUT")
    if out:
        with open(out, "w") as fh:
            json.dump({**report, "failures": failures}, fh, indent=1)
    assert not failures, f"{len(failures)} of {GRAPHS} graphs disagree; the first:\n" + "\n\n".join(
        failures[:3]
    )
    # The fuzzer reached what it is for (a generator change that loses a path fails here):
    assert fusion["results_in_place"] > 0, "no result was written into a dropped input"
    assert totals["inplace_keep"] + totals["inplace_clone"] > 0, "no live reuse candidate"
    assert fusion["reductions_fused"] > 0 and fusion["ops_unfused"] > 0, fusion
    assert totals["values_compared"] > GRAPHS * STEPS, totals
    if GRAPHS * STEPS >= 13:  # a deck's worth of steps: every kind ran
        assert all(totals[f"step_{kind}"] for kind in STEP_KINDS), totals
