"""Burn's multi-gpus example, quick mode (its README commands): data parallel over two logical
NdArray devices in one process (TrainingStrategy.MultiDevice), and, marked slow, over two
processes started by the launcher (TrainingStrategy.DistributedDataParallel)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from multi_gpus.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_two_devices_in_one_process(tmp_path: Path, capsys):
    art = tmp_path / "mg"
    assert main(["--devices", "2", "--epochs", "1", "--limit", "256", "--artifact-dir", str(art)]) == 0
    assert "trained on 2 device(s); epochs 1" in capsys.readouterr().out
    assert (art / "checkpoint/model-1.mpk.gz").is_file()
    # 256 digits / batch 64 = 4 steps, each split over the two devices: a metric line per
    # device per step (each device's half batch is an item for the metrics)
    assert len((art / "train/epoch-1/Loss.log").read_text().split()) == 4 * 2


def test_ddp_outside_a_launched_job_names_the_command(tmp_path: Path, capsys):
    assert main(["--ddp", "--epochs", "1", "--limit", "64", "--artifact-dir", str(tmp_path)]) == 2
    assert "python -m burn_train.launch --nproc-per-node" in capsys.readouterr().err


@pytest.mark.slow
def test_two_processes_with_the_launcher(tmp_path: Path):
    art = tmp_path / "ddp"
    proc = subprocess.run(
        [sys.executable, "-m", "burn_train.launch", "--nproc-per-node", "2",
         str(ROOT / "examples/multi-gpus/src/multi_gpus/cli.py"), "--ddp", "--epochs", "1",
         "--limit", "256", "--artifact-dir", str(art)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("trained on 1 device(s); epochs 1") == 2  # both ranks
    assert (art / "checkpoint/model-1.mpk.gz").is_file()
