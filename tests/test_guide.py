"""The Burn Book's guide end to end: train 3 epochs on the bundled digits, then infer from the
saved artifacts in a fresh model (inference must use the trained weights: random ones score ~10%)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from guide.cli import main


def test_guide_train_then_infer(tmp_path: Path, capsys):
    art = tmp_path / "guide"
    assert main(["train", "--epochs", "3", "--artifact-dir", str(art)]) == 0
    for rel in [
        "experiment.log",
        "config.json",
        "model.mpk.gz",
        "checkpoint/model-3.mpk.gz",
        "checkpoint/optim-3.mpk.gz",
        "checkpoint/scheduler-3.mpk.gz",
        "train/epoch-3/Loss.log",
        "train/epoch-3/Accuracy.log",
        "valid/epoch-3/Loss.log",
        "valid/epoch-3/Accuracy.log",
    ]:
        assert (art / rel).is_file(), rel
    # One line per iteration: 1437 items / batch 32 = 44 full batches + 1 partial = 45 lines.
    lines = (art / "train/epoch-3/Loss.log").read_text().splitlines()
    assert len(lines) == 45 and all(re.fullmatch(r"[0-9.eE+-]+,\d+", line) for line in lines)
    config = json.loads((art / "config.json").read_text())
    assert config["num_epochs"] == 3 and config["model"]["num_classes"] == 10
    capsys.readouterr()

    assert main(["infer", "--count", "40", "--artifact-dir", str(art)]) == 0
    out = capsys.readouterr().out.splitlines()
    predicted = [re.fullmatch(r"Predicted (\d) Expected (\d)", line) for line in out]
    predicted = [m for m in predicted if m]
    assert len(predicted) == 40
    correct = sum(m.group(1) == m.group(2) for m in predicted)
    assert out[-1] == f"{correct}/40 correct"
    # ~96% validation accuracy after 3 epochs; untrained or ignored weights give ~4/40.
    assert correct >= 34, out
