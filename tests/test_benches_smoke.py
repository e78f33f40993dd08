"""Smoke test of the benchmark suites: every suite runs with --quick and writes well-formed JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
]
# Suites without a raw-numpy reference (burn vs torch only).
NO_NUMPY = {"unary", "training_step"}


def test_every_suite_runs_quick_and_writes_json(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "benches", "--quick", "--out", str(tmp_path), *SUITES],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
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
        # conv2d / max_pool2d may still be "not implemented" on the NdArray backend.
        assert report["status"] in ("ok", "not implemented", "partial"), report
        for r in report["results"]:
            assert {"name", "params", "status", "times", "ratios"} <= set(r)
            if r["status"] != "ok":
                assert r["status"] == "not implemented" and "NotImplementedError" in r["error"]
                continue
            assert {"burn", "numpy"} <= set(r["times"]) or suite in NO_NUMPY
            assert "burn" in r["times"]
            for t in r["times"].values():
                assert (
                    t["median_s"] > 0 and t["min_s"] > 0 and t["number"] >= 1 and t["repeats"] >= 1
                )
            for v in r["ratios"].values():
                assert v > 0
            if "numpy" in r["times"]:
                assert r["ratios"]["burn/numpy"] > 0
        for tg in report["targets"]:
            assert {"description", "case", "metric", "limit", "value", "met", "verdict"} <= set(tg)


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
