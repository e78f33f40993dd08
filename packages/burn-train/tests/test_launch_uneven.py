"""Uneven last batches: 53 items in batches of 32 leave a last batch of 21, split 11/10 over
2 devices of one process and over 2 processes under the launcher. Each rank's gradient must be
weighted by its share (11/21, 10/21), not by 1/2, for the step to equal one device's on the
whole batch: both runs must give one device's parameters after 2 epochs of the guide model
(dropout off, Adam), to float32 summation order. (`test_data_parallel.py` splits its last
batch 11/11 on 2 devices, where both weightings agree.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

CHILD = Path(__file__).with_name("dp_child.py")
TOL = 1e-6
ENV = {"DP_ITEMS": "53"}  # 32 + 21


def _train(out: Path, devices: int, launch: int = 0) -> dict:
    cmd = [sys.executable, str(CHILD), str(out), str(devices), "2"]
    if launch:
        cmd = [sys.executable, "-m", "burn_train.launch", "--nproc-per-node", str(launch), *cmd[1:]]
    run = subprocess.run(
        cmd, check=False, capture_output=True, text=True, timeout=600, env={**os.environ, **ENV}
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return dict(np.load(out / "params.npz"))


@pytest.fixture(scope="module")
def one_device(tmp_path_factory):
    return _train(tmp_path_factory.mktemp("uneven1"), 1)


def _max_diff(a: dict, b: dict) -> float:
    assert a.keys() == b.keys()
    return max(float(np.max(np.abs(a[k] - b[k]))) for k in a)


@pytest.mark.parametrize("how", ["2 devices", "2 processes"])
def test_an_uneven_last_batch_gives_one_devices_parameters(tmp_path, one_device, how):
    params = _train(tmp_path, 2) if how == "2 devices" else _train(tmp_path, 1, launch=2)
    assert _max_diff(params, one_device) < TOL
    assert float(np.max(np.abs(params["linear2.weight"]))) > 0  # trained, not two blank models
