"""Data-parallel training of the guide model (dropout off) on NdArray devices: 2 and 4 devices
of one process and 2 processes under the launcher give the parameters one device gives with the
same global batch (150 items, batch 32: the last batch of 22 is split 11/11 or 6/6/5/5), for 3
epochs; a run killed mid-epoch resumes to the same parameters."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

CHILD = Path(__file__).with_name("dp_child.py")
TOL = 1e-6  # float32 sums in another order, through 3 epochs of Adam


def _train(out: Path, devices: int, epochs: int = 3, *extra: str, env=None, launch: int = 0):
    cmd = [sys.executable, str(CHILD), str(out), str(devices), str(epochs), *extra]
    if launch:
        cmd = [sys.executable, "-m", "burn_train.launch", "--nproc-per-node", str(launch), *cmd[1:]]
    run = subprocess.run(
        cmd, capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})}
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return dict(np.load(out / "params.npz"))


def _max_diff(a: dict, b: dict) -> float:
    assert a.keys() == b.keys()
    return max(float(np.max(np.abs(a[k] - b[k]))) for k in a)


@pytest.fixture(scope="module")
def one_device_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("dp1")
    _train(out, 1)
    return out


@pytest.fixture(scope="module")
def one_device(one_device_dir):
    return dict(np.load(one_device_dir / "params.npz"))


def _epoch_mean(out: Path, metric: str, epoch: int) -> float:
    """The item-weighted epoch mean of a training metric, from the Learner's metric log."""
    rows = [line.split(",") for line in (out / "train" / f"epoch-{epoch}" / f"{metric}.log")
            .read_text().split()]  # fmt: skip
    return sum(float(v) * int(n) for v, n in rows) / sum(int(n) for _, n in rows)


@pytest.mark.parametrize("devices", [2, 4])
def test_devices_of_one_process_match_one_device(tmp_path, one_device, devices):
    params = _train(tmp_path, devices)
    assert _max_diff(params, one_device) < TOL
    # Training moved the parameters: the comparison is not of two untrained models.
    assert float(np.max(np.abs(params["linear2.weight"]))) > 0


def test_two_processes_under_the_launcher_match_one_device(tmp_path, one_device, one_device_dir):
    params = _train(tmp_path, 1, launch=2)
    assert _max_diff(params, one_device) < TOL
    # Rank 0 logs every rank's items: its epoch metrics are the whole batch's.
    lines = (tmp_path / "train" / "epoch-3" / "Loss.log").read_text().split()
    assert len(lines) == 10  # 5 steps x 2 ranks
    for metric in ("Loss", "Accuracy"):
        want = _epoch_mean(one_device_dir, metric, 3)
        assert abs(_epoch_mean(tmp_path, metric, 3) - want) < 1e-4 * max(1.0, abs(want))


def test_resume_after_kill_mid_epoch_matches_uninterrupted(tmp_path, one_device):
    out = tmp_path / "run"
    env = {**os.environ, "DP_STEP_DELAY": "0.3"}
    cmd = [sys.executable, str(CHILD), str(out), "2", "3"]
    with subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as p:
        marker = out / "checkpoint" / "complete-1.json"
        deadline = time.monotonic() + 300
        while not marker.exists() and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # into epoch 2 (5 batches of >= 0.3 s each)
        p.kill()
        p.communicate()
    assert marker.exists()
    assert not (out / "checkpoint" / "complete-2.json").exists(), "the kill came too late"
    assert not (out / "params.npz").exists()
    resumed = _train(out, 2, 3, "resume")
    assert _max_diff(resumed, one_device) < TOL


def test_a_failing_rank_fails_the_launch_with_its_error(tmp_path):
    out = tmp_path / "fail"
    cmd = [sys.executable, "-m", "burn_train.launch", "--nproc-per-node", "2", "--grace", "5"]
    cmd += [str(CHILD), str(out), "1", "3"]
    env = {**os.environ, "DP_FAIL_RANK": "1", "DP_FAIL_AFTER": "7"}  # rank 1, in epoch 2
    start = time.monotonic()
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode != 0
    assert "launch: rank 1 failed (RuntimeError: boom on rank 1" in run.stderr
    assert "boom on rank 1" in run.stderr
    assert time.monotonic() - start < 120
    _checkpoint_loads(out, 1)


def test_ctrl_c_stops_every_rank_and_keeps_checkpoints(tmp_path):
    out = tmp_path / "int"
    cmd = [sys.executable, "-m", "burn_train.launch", "--nproc-per-node", "2"]
    cmd += [str(CHILD), str(out), "1", "3"]
    env = {**os.environ, "DP_STEP_DELAY": "0.3"}
    with subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as p:
        marker = out / "checkpoint" / "complete-1.json"
        deadline = time.monotonic() + 300
        while not marker.exists() and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        sent = time.monotonic()
        _, err = p.communicate(timeout=120)
    assert p.returncode == 128 + signal.SIGINT, err.decode()[-2000:]
    assert time.monotonic() - sent < 30
    _checkpoint_loads(out, 1)
    assert not (out / "checkpoint" / "complete-3.json").exists()


def _checkpoint_loads(out: Path, epoch: int) -> None:
    from burn_record import NamedMpkFileRecorder

    assert (out / "checkpoint" / f"complete-{epoch}.json").exists()
    rec = NamedMpkFileRecorder()
    for kind in ("model", "optim", "scheduler"):
        rec.load(out / "checkpoint" / f"{kind}-{epoch}")


def test_launcher_sets_rank_variables_and_keeps_nvls_off(tmp_path):
    script = tmp_path / "show.py"
    script.write_text(
        "import os\n"
        "keys = ['BURN_RANK', 'BURN_LOCAL_RANK', 'BURN_WORLD_SIZE', 'BURN_MASTER_ADDR',\n"
        "        'NCCL_NVLS_ENABLE']\n"
        # one write per rank: print's text and newline can interleave between ranks
        "os.write(1, (' '.join(os.environ[k] for k in keys) + '\\n').encode())\n"
    )
    env = {**os.environ, "NCCL_NVLS_ENABLE": "1"}  # the launcher overrides it
    run = subprocess.run(
        [sys.executable, "-m", "burn_train.launch", "--nproc-per-node", "3", str(script)],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = sorted(run.stdout.split("\n")[:-1])
    assert lines == [f"{r} {r} 3 127.0.0.1 0" for r in range(3)]
