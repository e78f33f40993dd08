"""Smoke test of the benchmark suites: every suite runs with --quick without any error (a case that
raises, even NotImplementedError, or a reference that fails is a failure) and writes JSON whose
timings, ratios and target values are finite positive numbers consistent with each other."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SUITES = [
    "launch_overhead",
    "binary",
    "unary",
    "matmul",
    "conv2d",
    "max_pool2d",
    "reduce",
    "softmax",
    "training_step",
    "autodiff",
    "attention",
    "transformer_encoder",
    "transformer_precision",
]
# Cases without a raw-numpy reference (burn vs torch only): every case of a suite, or the cases
# whose name starts with one of the listed operations.
NO_NUMPY = {
    "training_step": None,
    "unary": ("erf ",),
    "attention": None,
    "transformer_encoder": None,
    "transformer_precision": None,
}  # numpy has no erf


def _has_numpy(suite: str, case: str) -> bool:
    if suite not in NO_NUMPY:
        return True
    ops = NO_NUMPY[suite]
    return ops is not None and not case.startswith(ops)


def _positive(x) -> bool:
    """A finite number > 0 (JSON ints and floats; not bool, None or a string)."""
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def _check_times(suite: str, r: dict) -> None:
    times = r["times"]
    assert "burn" in times and ("numpy" in times) == _has_numpy(suite, r["name"]), (suite, r)
    for impl, t in times.items():
        where = f"{suite}/{r['name']}/{impl}"
        assert all(_positive(t[k]) for k in ("median_s", "min_s", "max_s")), (where, t)
        assert t["min_s"] <= t["median_s"] <= t["max_s"], (where, t)
        for k in ("number", "repeats"):
            assert isinstance(t[k], int) and t[k] >= 1, (where, t)
    # one ratio per reference present, computed from the medians
    refs = [ref for ref in ("numpy", "torch") if ref in times]
    assert sorted(r["ratios"]) == sorted(f"burn/{ref}" for ref in refs), (suite, r)
    for ref in refs:
        ratio = r["ratios"][f"burn/{ref}"]
        assert _positive(ratio), (suite, r)
        assert ratio == pytest.approx(times["burn"]["median_s"] / times[ref]["median_s"])


def _check_target(suite: str, tg: dict, by_name: dict, torch: bool) -> None:
    assert {"description", "case", "metric", "limit", "value", "met", "verdict"} <= set(tg)
    assert _positive(tg["limit"]), tg
    r = by_name.get(tg["case"])
    ref = tg["metric"].split("/")[1]
    if r is not None and ref in r["times"]:
        # measured: the value is the case's ratio and the verdict follows from the limit
        assert _positive(tg["value"]) and tg["value"] == r["ratios"][tg["metric"]], tg
        assert tg["met"] is (tg["value"] <= tg["limit"]), tg
        assert tg["verdict"] == ("met" if tg["met"] else "missed"), tg
    elif r is not None:
        # only a reference that is not installed may be missing (torch is optional)
        assert ref == "torch" and not torch, tg
        assert tg["value"] is None and tg["verdict"] == "n/a (torch not available)", tg
    else:
        # a full-size case that --quick does not run
        assert tg["value"] is None and tg["verdict"] == "n/a", tg


def test_every_suite_runs_quick_and_writes_json(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "benches", "--quick", "--out", str(tmp_path), *SUITES],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,  # seconds in --quick on an idle machine; generous for a loaded one
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for suite in SUITES:
        assert f"== {suite}:" in proc.stdout
        report = json.loads((tmp_path / f"{suite}.json").read_text())
        assert {"suite", "description", "status", "environment", "results", "targets"} <= set(
            report
        )
        assert report["suite"] == suite
        assert report["environment"]["quick"] is True
        assert report["results"], suite
        # no error of any kind: every case ran on burn and on every reference it has
        failures = [
            (r["name"], r["status"], r.get("error"), r.get("reference_errors"))
            for r in report["results"]
            if r["status"] != "ok" or "error" in r or r.get("reference_errors")
        ]
        assert report["status"] == "ok" and not failures, (suite, failures)
        for r in report["results"]:
            assert {"name", "params", "status", "times", "ratios"} <= set(r)
            _check_times(suite, r)
        by_name = {r["name"]: r for r in report["results"]}
        torch = report["environment"]["torch"] is not None
        for tg in report["targets"]:
            _check_target(suite, tg, by_name, torch)


def test_suites_run_on_another_backend(tmp_path):
    # --backend: the burn side runs on OpenCl (PoCL here), Autodiff suites on Autodiff(OpenCl()),
    # and the JSON says so; the timed loops end with device.sync() (the queue is asynchronous).
    suites = ["launch_overhead", "conv2d", "training_step", "autodiff"]
    proc = subprocess.run(
        [sys.executable, "-m", "benches", "--quick", "--no-torch", "--backend", "opencl"]
        + ["--out", str(tmp_path), *suites],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for suite in suites:
        report = json.loads((tmp_path / f"{suite}.json").read_text())
        assert report["status"] == "ok", report
        assert report["environment"]["burn_backend"].startswith("OpenCl("), report["environment"]
        for r in report["results"]:
            _check_times(suite, r)
            if "backend" in r["params"] and r["params"]["backend"]:
                assert "OpenCl(" in r["params"]["backend"], r["params"]


def test_unknown_suite_is_refused(tmp_path):
    proc = subprocess.run(
        [sys.executable, "benches/run.py", "no_such_suite", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert "unknown suite" in proc.stderr


def test_load_record_safetensors_case_runs_small(tmp_path):
    # The 100M-parameter case scaled down to 200k: it runs and writes its JSON (no timing checks).
    proc = subprocess.run(
        [sys.executable, "benches/load_record/bench_safetensors.py", "--params", "200k"]
        + ["--repeats", "1", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((tmp_path / "load_record_safetensors.json").read_text())
    names = {r["name"] for r in report["results"]}
    assert {"burn_import.load_safetensors", "SafetensorsFileRecorder.load"} <= names
    assert all(r["params"]["n_params"] == 200_000 for r in report["results"])


def test_suites_with_other_openmp_settings_run_in_their_own_process():
    # The training suites ask for OMP_WAIT_POLICY=PASSIVE; OpenMP reads it once per process, so
    # `python -m benches unary training_step` must not run unary under it.
    sys.path.insert(0, str(ROOT))
    try:
        from benches.run import env_groups
    finally:
        sys.path.remove(str(ROOT))

    groups = env_groups(["unary", "training_step", "binary", "autodiff"])
    assert groups == [
        ({}, ["unary", "binary"]),
        ({"OMP_WAIT_POLICY": "PASSIVE"}, ["training_step", "autodiff"]),
    ]
    assert env_groups(["unary", "binary"]) == [({}, ["unary", "binary"])]


@pytest.mark.parametrize("shared", ["1", "0"])
def test_inputs_share_ndarrays_buffer_unless_told(monkeypatch, shared):
    """`suites/_common.inputs`: on NdArray the numpy reference (and CPU torch, when importable)
    reads the burn tensor's own buffer; `BENCH_SHARED_INPUTS=0` gives each its own copy. The
    values are equal either way."""
    import numpy as np
    from burn_ndarray import NdArray

    sys.path.insert(0, str(ROOT))
    try:
        from benches.suites._common import inputs, rand
    finally:
        sys.path.remove(str(ROOT))
    try:
        import torch
    except ImportError:
        torch = None
    monkeypatch.setenv("BENCH_SHARED_INPUTS", shared)
    src = rand((8, 16), 1)
    ctx = {"device": NdArray().device(), "torch": torch}
    ((b, n, t),) = inputs(ctx, src)
    prim = b.into_primitive()
    np.testing.assert_array_equal(prim, src)
    np.testing.assert_array_equal(n, src)
    assert np.shares_memory(n, prim) == (shared == "1")
    assert not np.shares_memory(prim, src)  # burn's from_data copies the caller's array
    if torch is not None:
        np.testing.assert_array_equal(t.numpy(), src)
        assert np.shares_memory(t.numpy(), prim) == (shared == "1")


def test_interleaved_timing_runs_the_repeats_in_turns():
    """`measure(..., interleave=True)` (GPU suites of host-bound steps): every implementation is
    warmed and calibrated, then one repeat of each in turn, so a change of host speed reaches
    both sides; the result has the block form's fields."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benches._harness import Settings
    from benches._timing import measure

    order: list[str] = []
    timing = {"on": False}

    def impl(name):
        def fn():
            if timing["on"]:
                order.append(name)

        return fn

    settings = Settings(min_time=0.0, repeats=4, warmup_time=0.0, settle_time=0.0)
    syncs = {"burn": lambda: timing.update(on=True)}  # from the first calibrated loop on
    out = measure({"burn": impl("burn"), "torch": impl("torch")}, settings, syncs, interleave=True)
    assert set(out) == {"burn", "torch"}
    for r in out.values():
        assert r["repeats"] == 4 and r["interleaved"] and r["median_s"] >= 0
        assert {"min_s", "max_s", "number", "cpu_per_wall"} <= set(r)
    # after calibration, the timed calls alternate in blocks of each side's `number`
    runs = [k for k, _ in itertools.groupby(order)]
    assert runs[-8:] == ["burn", "torch"] * 4
