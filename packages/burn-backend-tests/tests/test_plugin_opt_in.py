"""The conformance plugin loads only where a session asks for it (`pytest_plugins` or `-p`):
installing burn-backend-tests or burn-tensor adds no fixture to anyone else's pytest run."""

from __future__ import annotations

import subprocess
import sys

CASE = """
def test_uses_the_suite_context(burn):
    import numpy as np
    t = burn.float(np.array([1.0, -2.0]))
    burn.assert_close(t.abs(), np.array([1.0, 2.0]))
"""


def _pytest(tmp_path, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_case.py").write_text(CASE)
    # Run outside the workspace (its rootdir conftest opts in): a user's project, in this env.
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args, "test_case.py"]
    return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)


def test_a_session_that_does_not_opt_in_has_no_suite_fixtures(tmp_path):
    run = _pytest(tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "fixture 'burn' not found" in run.stdout, run.stdout


def test_a_session_that_opts_in_runs_the_suite_on_the_named_backend(tmp_path):
    run = _pytest(tmp_path, "-p", "burn_backend_tests.plugin", "--burn-backend", "ndarray")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout, run.stdout
    # the plugin's own session summary: ops of the table the test reached on NdArray
    assert "burn conformance: op-table coverage" in run.stdout, run.stdout
    assert "NdArray(): " in run.stdout and "ops of the table covered" in run.stdout, run.stdout
