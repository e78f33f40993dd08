"""The completeness case under pytest-xdist (`-n 2 --dist loadfile`, the workspace's default).

Each worker collects every file but runs only the files it is handed, so the plugin counts suite
tests per file: a file holding the whole suite must get its completeness case run (and passed) in
its worker, a `-k` run must still skip it saying why, and the op-table summary the workers
computed must reach the controller's terminal.

Each session runs the whole suite on NdArray once (~10 s of CPU).
"""

from __future__ import annotations

import subprocess
import sys

WHOLE_SUITE = "from burn_backend_tests.conformance import *  # noqa: F403\n"
ONE_CASE = """
def test_one_suite_case(burn):
    import numpy as np
    burn.assert_close(burn.float(np.array([1.0, -2.0])).abs(), np.array([1.0, 2.0]))
"""


def _pytest(tmp_path, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_whole_suite.py").write_text(WHOLE_SUITE)
    (tmp_path / "test_one_case.py").write_text(ONE_CASE)
    # Outside the workspace (no addopts): the options are exactly those given here.
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "burn_backend_tests.plugin"]
    cmd += ["--burn-backend", "ndarray", "-n", "2", "--dist", "loadfile", *args]
    return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)


def _lines_with(text: str, *words: str) -> list[str]:
    return [line for line in text.splitlines() if all(w in line for w in words)]


def test_the_completeness_case_runs_in_an_xdist_worker(tmp_path):
    run = _pytest(tmp_path, "-v")
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    # two workers took part, and the completeness case passed in one of them (not skipped)
    assert "created: 2/2 workers" in out, out[-3000:]
    done = _lines_with(run.stdout, "[gw", "test_whole_suite.py::test_op_table_complete")
    assert done and all("PASSED" in line for line in done), done or out[-3000:]
    assert not _lines_with(run.stdout, "SKIPPED"), _lines_with(run.stdout, "SKIPPED")
    # the summary came back from the workers: the whole file covered the table, with no
    # "subset" remark; the one-case file is reported as the subset it is
    assert "burn conformance: op-table coverage" in run.stdout, out[-3000:]
    (whole,) = _lines_with(run.stdout, "test_whole_suite.py: NdArray(): ", "ops of the table")
    covered, _, total = whole.split(": ")[-1].split(" ops")[0].partition(" of ")
    assert covered == total and "subset" not in whole, whole
    (one,) = _lines_with(run.stdout, "test_one_case.py: NdArray(): ")
    assert "subset" in one, one


def test_a_keyword_selection_still_skips_the_completeness_case_saying_why(tmp_path):
    run = _pytest(tmp_path, "-rs", "-k", "abs or complete")
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    (skip,) = _lines_with(run.stdout, "SKIPPED", "ran a subset of test_whole_suite.py")
    assert "not selected" in skip, skip
    (whole,) = _lines_with(run.stdout, "test_whole_suite.py: NdArray(): ")
    assert "subset" in whole, whole
