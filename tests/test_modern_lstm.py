"""Burn's modern-lstm example, quick mode (its README command with small sizes): the generated
task is what it claims (checked in numpy float64), and the stacked bidirectional LSTM learns it
(valid error below the predict-the-mean baseline)."""

from __future__ import annotations

import numpy as np
from modern_lstm import generate
from modern_lstm.cli import main


def test_generated_sequences_are_fibonacci_like_with_the_stated_noise():
    seqs, targets = generate(2000, seq_length=10, noise=0.1, seed=5)
    full = np.concatenate([seqs, targets[:, None]], axis=1).astype(np.float64)
    assert full.shape == (2000, 11) and (0 <= full[:, :2]).all() and (full[:, :2] < 1).all()
    resid = full[:, 2:] - full[:, 1:-1] - full[:, :-2]
    assert abs(resid.mean()) < 0.01 and abs(resid.std() - 0.1) < 0.005  # float32 rounding aside
    again, _ = generate(2000, seq_length=10, noise=0.1, seed=5)
    assert np.array_equal(seqs, again)  # seeded: the same task every run


QUICK = ["--backend", "ndarray", "--num-epochs", "4", "--num-sequences", "300",
         "--batch-size", "16", "--hidden-size", "8", "--lr", "0.01"]  # fmt: skip


def test_quick_mode_learns_better_than_the_mean(capsys):
    assert main(QUICK) == 0
    out = capsys.readouterr().out
    valid = [float(line.rsplit(" ", 1)[1]) for line in out.splitlines() if line.startswith("Epoch ")]
    assert len(valid) == 4 and valid[-1] < valid[0]
    rmse = float(next(x for x in out.splitlines() if x.startswith("Valid RMSE")).split()[2])
    _, targets = generate(300)
    baseline = float(np.std(targets[240:].astype(np.float64)))  # predicting the valid mean
    assert rmse < 0.8 * baseline, (rmse, baseline)


def test_bad_sizes_are_usage_errors(capsys):
    for argv in (["--num-layers", "0"], ["--num-sequences", "3"]):
        try:
            main(argv)
        except SystemExit as e:
            assert e.code == 2
        else:
            raise AssertionError(f"{argv} must be refused")
    assert "--num-sequences must be >= 5" in capsys.readouterr().err
