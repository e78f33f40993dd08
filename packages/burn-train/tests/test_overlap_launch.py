"""The overlap through the launcher and the Learner: 2 ranks train 2 epochs with 4 KB gradient
buckets and with the reduction after the pass (`BURN_DDP_BUCKET_MB=0`): the parameters are
bitwise equal. On NdArray over TCP here; on GPUs the same check runs with NCCL (its second
stream) when `BURN_TEST_NCCL=1` and cupy sees 2 GPUs (the lead's GPU command)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(
    os.environ.get("BURN_TEST_SLOW_DP") != "1" and os.environ.get("BURN_TEST_NCCL") != "1",
    reason="end-to-end through the launcher (~20-40 s): set BURN_TEST_SLOW_DP=1 (the in-process "
    "tests test_overlap.py / test_zero.py check the same sums by default)",
)
CHILD = Path(__file__).with_name("overlap_child.py")


def _train(out: Path, backend: str, bucket_mb: str, collective: str) -> dict:
    cmd = [sys.executable, "-m", "burn_train.launch", "--nproc-per-node", "2", str(CHILD),
           str(out), backend]  # fmt: skip
    env = {**os.environ, "BURN_DDP_BUCKET_MB": bucket_mb, "BURN_COLLECTIVE": collective}
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "waiting on collectives per step" in run.stderr
    return dict(np.load(out / "params.npz"))


def _cases():
    yield pytest.param("ndarray", "tcp", id="ndarray-tcp")
    if os.environ.get("BURN_TEST_NCCL") == "1":
        yield pytest.param("cuda", "nccl", id="cuda-nccl")


@pytest.mark.parametrize(("backend", "collective"), list(_cases()))
def test_overlap_bitwise_equal_to_reduction_after_backward(tmp_path, backend, collective):
    plain = _train(tmp_path / "plain", backend, "0", collective)
    overlapped = _train(tmp_path / "overlap", backend, str(4096 / 2**20), collective)
    assert plain.keys() == overlapped.keys()
    for k in plain:
        np.testing.assert_array_equal(overlapped[k], plain[k], err_msg=k)
    first = parts_params()
    assert any(np.max(np.abs(plain[k] - first[k])) > 1e-3 for k in first)


def parts_params():
    sys.path.insert(0, str(Path(__file__).parent))
    import real_parts

    return real_parts.params(real_parts.init_model(d_hidden=256))
