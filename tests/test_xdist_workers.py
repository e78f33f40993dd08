"""The root conftest's pytest-xdist settings: `-n auto` is capped at min(CPUs, memory / 3 GiB, 8),
and a summary section a worker sends back is printed by the controller."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GIB = 1 << 30


def _root_conftest():
    spec = importlib.util.spec_from_file_location("_root_conftest_under_test", ROOT / "conftest.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize(
    ("cpus", "memory", "workers"),
    [
        (2, 23 * GIB, 2),  # CI: 2 cores, plenty of memory per worker
        (64, 512 * GIB, 8),  # a large machine: the cap of 8
        (16, 8 * GIB, 2),  # memory-bound: 8 GiB / 3 GiB = 2 workers
        (4, 2 * GIB, 1),  # less than one worker's memory still runs one
        (1, 64 * GIB, 1),
    ],
)
def test_auto_worker_count_is_capped_by_cpus_memory_and_eight(cpus, memory, workers):
    assert _root_conftest().worker_count(cpus, memory) == workers


def test_the_env_variable_of_pytest_xdist_still_wins(monkeypatch):
    conftest = _root_conftest()
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "5")
    assert conftest.pytest_xdist_auto_num_workers(None) is None  # xdist's own hook reads it
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS")
    assert 1 <= conftest.pytest_xdist_auto_num_workers(None) <= 8


SENDER = """
import pytest

GATHERED = []


def test_gathers():
    GATHERED.append("line from a worker")


def pytest_sessionfinish(session):
    out = getattr(session.config, "workeroutput", None)
    if out is not None and GATHERED:
        out.setdefault("summary_sections", {})["gathered by a test"] = list(GATHERED)
"""


def test_a_section_sent_by_a_worker_is_printed_by_the_controller(tmp_path):
    # The workspace's root conftest as this session's, and a test module that is also a plugin
    # (-p) sending what its test gathered, as burn-import's conftest sends the ONNX summary.
    (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text())
    (tmp_path / "test_sender.py").write_text(SENDER)
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "2"]
    cmd += ["-p", "test_sender", "test_sender.py"]
    run = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "bringing up nodes" in out and "1 passed" in out, out  # it ran in a worker
    assert "gathered by a test" in run.stdout and "line from a worker" in run.stdout, out
