"""Launched data-parallel ranks check the loss as one device does: every step when values are
read every step (NdArray's default), else when the batch of steps is read (a GPU's default,
16), so a step does not wait for the device to read its loss. A NaN loss is still named by its
iteration, the model in the error is finite (the one before the batch's first step), and the
launch fails with that error. (Before, the ranks read every step's loss before its update
whatever `read_every` said: the GPU waited for the host each step.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CHILD = Path(__file__).with_name("nan_dp_child.py")


EAGER = pytest.param(
    1, 1,
    marks=pytest.mark.skipif(
        os.environ.get("BURN_TEST_SLOW_DP") != "1",
        reason="one more 2-process run (~5 s): set BURN_TEST_SLOW_DP=1",
    ),
)  # fmt: skip


@pytest.mark.parametrize(("every", "steps"), [EAGER, (4, 4)])
def test_nan_found_when_its_batch_of_steps_is_read(tmp_path, every, steps):
    cmd = [sys.executable, "-m", "burn_train.launch", "--nproc-per-node", "2", "--grace", "5"]
    cmd += [str(CHILD), str(tmp_path), str(every)]
    env = {**os.environ, "BURN_NUM_THREADS": "1"}
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode != 0
    assert "NonFiniteLossError" in run.stderr, run.stderr[-3000:]
    report = json.loads((tmp_path / "nan.json").read_text())
    # eager (every 1): stopped before step 2's update; batched by 4: found when steps 1-4 are
    # read, after their updates
    assert report == {"iteration": 2, "adam_steps": steps, "model_finite": True}, report
