"""The Burn Book's guide end to end: train 1 epoch on a subset, then infer from the artifacts."""

from __future__ import annotations

import json
import re
from pathlib import Path

from guide.cli import main


def test_guide_train_then_infer(tmp_path: Path, capsys):
    art = tmp_path / "guide"
    assert main(["train", "--epochs", "1", "--limit", "256", "--artifact-dir", str(art)]) == 0
    for rel in [
        "experiment.log",
        "config.json",
        "model.mpk.gz",
        "checkpoint/model-1.mpk.gz",
        "checkpoint/optim-1.mpk.gz",
        "train/epoch-1/Loss.log",
        "train/epoch-1/Accuracy.log",
        "valid/epoch-1/Loss.log",
        "valid/epoch-1/Accuracy.log",
    ]:
        assert (art / rel).is_file(), rel
    # One line per iteration: 256 items / batch 32 = 8 lines of `value,count`.
    lines = (art / "train/epoch-1/Loss.log").read_text().splitlines()
    assert len(lines) == 8 and all(re.fullmatch(r"[0-9.eE+-]+,\d+", line) for line in lines)
    config = json.loads((art / "config.json").read_text())
    assert config["num_epochs"] == 1 and config["model"]["num_classes"] == 10
    capsys.readouterr()

    assert main(["infer", "--count", "5", "--artifact-dir", str(art)]) == 0
    out = capsys.readouterr().out.splitlines()
    predicted = [line for line in out if re.fullmatch(r"Predicted \d Expected \d", line)]
    assert len(predicted) == 5
    assert re.fullmatch(r"\d/5 correct", out[-1])
