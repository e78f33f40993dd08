"""Burn's simple-regression example: Learner + RegressionOutput on synthetic housing data."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from burn_autodiff import Autodiff
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
    model = run(str(art), config, device, HousingDataset.train(), HousingDataset.validation())
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

    # inference on the 200 held-out test districts, from the saved artifacts
    test = HousingDataset.test()
    items = [test.get(i) for i in range(len(test))]
    lines: list[str] = []
    pairs = infer(str(art), device.inner(), items, log=lines.append)
    assert len(pairs) == 200 and all(line.startswith("Predicted ") for line in lines)
    predicted = np.array([p for p, _ in pairs])
    targets = np.array([item.median_house_value for item in items])
    assert [e for _, e in pairs] == pytest.approx(targets.tolist())  # expected = the targets
    # the predictions are the trained model's (saved half precision by CompactRecorder: the
    # rounding moves them by ~1e-4, far less than their errors of ~0.3)
    batch = HousingBatcher(device.inner()).batch(items)
    in_memory = model.valid().forward(batch.inputs).flatten(0, 1).numpy()
    np.testing.assert_allclose(predicted, in_memory, rtol=0, atol=1e-2)
    # and they fit: 3 epochs on the 1600 training districts explain ~96% of the test targets'
    # variance (MSE 0.086; the noise floor is 0.01). Predicting any constant cannot go below the
    # variance (2.2); the untrained network is at ~10. Bound: 90% of the variance explained.
    mse = float(np.mean((predicted - targets) ** 2))
    assert mse < 0.1 * targets.var(), (mse, targets.var())


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
