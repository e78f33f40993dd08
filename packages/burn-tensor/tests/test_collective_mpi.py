"""BURN_COLLECTIVE=mpi: real MPI processes (`mpiexec -n 2|3`) joined through
`init_process_group()`; sums, means, broadcast and all-gather against numpy, the sum bitwise
the same on every rank, a shape mismatch named. Skipped (with the reason) where mpi4py or
mpiexec is missing: install them with `pip install mpi4py mpich`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

CHILD = Path(__file__).with_name("mpi_child.py")


def _mpiexec() -> str:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        pytest.skip("mpi4py is not installed (pip install mpi4py mpich)")
    here = Path(sys.executable).with_name("mpiexec")
    found = str(here) if here.exists() else shutil.which("mpiexec")
    if found is None:
        pytest.skip("no mpiexec on PATH or beside the interpreter (pip install mpich)")
    return found


@pytest.mark.parametrize("n", [2, 3])
def test_mpi_collectives_against_numpy(tmp_path, n):
    cmd = [_mpiexec(), "-n", str(n), sys.executable, str(CHILD), str(tmp_path)]
    env = {**os.environ, "BURN_COLLECTIVE": "mpi"}
    for v in ("BURN_RANK", "BURN_WORLD_SIZE", "BURN_MASTER_PORT"):
        env.pop(v, None)
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    xs = [np.random.default_rng(r).standard_normal((3, 5)).astype(np.float32) for r in range(n)]
    want = np.stack(xs).astype(np.float64).sum(0)
    got = [dict(np.load(tmp_path / f"rank-{r}.npz")) for r in range(n)]
    for r, g in enumerate(got):
        assert int(g["world"]) == n
        np.testing.assert_allclose(g["sum"], want, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(g["sum"], got[0]["sum"])  # the same bits everywhere
        np.testing.assert_allclose(g["mean"], want / n, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(g["bcast"], xs[n - 1])
        np.testing.assert_array_equal(g["gather"], np.stack(xs))


def test_mpi_shape_mismatch_is_named(tmp_path):
    cmd = [_mpiexec(), "-n", "2", sys.executable, str(CHILD), str(tmp_path), "mismatch"]
    run = subprocess.run(
        cmd, capture_output=True, text=True, timeout=60, env={**os.environ, "BURN_COLLECTIVE": "mpi"}
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "rank 1: CollectiveError: all_reduce: rank 0 gave" in run.stdout
    assert "rank 1 gave" in run.stdout
