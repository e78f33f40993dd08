"""Burn's mnist example, quick mode (its README command): SupervisedTraining with checkpoints
and the LR metric, the Evaluator on the test digits, and the saved Burnpack read back by
`infer` (the model's paths are Burn's: `conv1.conv.weight`, ..., `fc3.bias`)."""

from __future__ import annotations

from pathlib import Path

from burn_store import BurnpackReader
from mnist_example.cli import main


def test_quick_mode_trains_evaluates_and_saves_a_burnpack(tmp_path: Path, capsys):
    art = tmp_path / "mnist"
    assert main(["train", "--epochs", "1", "--limit", "300", "--artifact-dir", str(art)]) == 0
    out = capsys.readouterr().out
    assert "epochs 1; test accuracy" in out and "[test test] iter 1 | 75/75 items" in out
    for rel in ["model.mpk.gz", "model.bpk", "checkpoint/model-1.mpk.gz",
                "train/epoch-1/Learning Rate.log", "test/test/Accuracy.log"]:  # fmt: skip
        assert (art / rel).is_file(), rel
    reader = BurnpackReader(art / "model.bpk")
    assert len(reader.descriptors) == 18 and reader.descriptors["fc1.weight"].shape == (1600, 128)
    assert reader.metadata["format"] == "burnpack"
    assert main(["infer", str(art / "model.bpk")]) == 0
    assert "applied 18, skipped 0, missing 0, unused 0, errors 0" in capsys.readouterr().out
    assert main(["infer", str(tmp_path / "none.bpk")]) == 2
    assert "Burnpack file not found" in capsys.readouterr().err
