"""Burn's simple-regression example: Learner + RegressionOutput on synthetic housing data."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_dataset import PartialDataset
from burn_ndarray import NdArray
from burn_optim import AdamConfig
from simple_regression import (
    FEATURES_MAX,
    FEATURES_MIN,
    ExpConfig,
    HousingBatcher,
    HousingDataset,
    RegressionModelConfig,
    generate_housing_items,
    infer,
    run,
)


def test_generated_data_is_reproducible_and_normalized():
    assert generate_housing_items(50) == generate_housing_items(50)
    ds = HousingDataset.train()
    assert len(ds) == 1600 and len(HousingDataset.validation()) == len(HousingDataset.test()) == 200
    items = [ds.get(i) for i in range(64)]
    batch = HousingBatcher(NdArray().device()).batch(items)
    x = batch.inputs.numpy()
    assert x.shape == (64, 8) and x.min() >= 0.0 and x.max() <= 1.0
    assert batch.targets.dims() == [64]
    assert len(FEATURES_MIN) == len(FEATURES_MAX) == 8


def _read_losses(path: Path) -> list[float]:
    return [float(line.split(",")[0]) for line in path.read_text().splitlines()]


def test_learner_fit_then_infer(tmp_path: Path):
    device = Autodiff(NdArray()).device()
    art = tmp_path / "sr"
    config = ExpConfig(
        RegressionModelConfig(), AdamConfig(), num_epochs=3, batch_size=64, learning_rate=1e-2
    )
    train_set = PartialDataset(HousingDataset.train(), 0, 512)
    valid_set = HousingDataset.validation()
    run(str(art), config, device, train_set, valid_set)
    for rel in [
        "experiment.log",
        "config.json",
        "model.mpk.gz",
        "checkpoint/model-3.mpk.gz",
        "train/epoch-1/Loss.log",
        "valid/epoch-3/Loss.log",
    ]:
        assert (art / rel).is_file(), rel
    first = np.mean(_read_losses(art / "valid/epoch-1/Loss.log"))
    last = np.mean(_read_losses(art / "valid/epoch-3/Loss.log"))
    assert last < first

    test = HousingDataset.test()
    lines: list[str] = []
    pairs = infer(str(art), device.inner(), [test.get(i) for i in range(4)], log=lines.append)
    assert len(pairs) == 4 and all(line.startswith("Predicted ") for line in lines)
    assert [e for _, e in pairs] == pytest.approx(
        [test.get(i).median_house_value for i in range(4)]
    )


def test_cli_train_and_infer_subprocess(tmp_path: Path):
    art = str(tmp_path / "sr")
    cmd = [sys.executable, "-m", "simple_regression.cli"]
    subprocess.run(
        cmd + ["train", "--epochs", "1", "--limit", "256", "--artifact-dir", art],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    proc = subprocess.run(
        cmd + ["infer", "--count", "3", "--artifact-dir", art],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    lines = proc.stdout.splitlines()
    assert sum(line.startswith("Predicted ") for line in lines) == 3
    assert lines[-1].startswith("MSE on 3 test items:")
