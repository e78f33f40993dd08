"""Burn's custom-learning-strategy example, quick mode (its README command with a small
`--limit`): the hand-written loop trains, logs every iteration, checkpoints and saves."""

from __future__ import annotations

from pathlib import Path

from custom_learning_strategy.cli import main


def test_quick_mode_trains_with_the_custom_loop(tmp_path: Path, capsys):
    art = tmp_path / "cls"
    assert main(["--epochs", "2", "--limit", "480", "--artifact-dir", str(art)]) == 0
    out = capsys.readouterr().out
    assert "epochs completed: 2" in out and "Learner Summary" in out
    log = (art / "experiment.log").read_text()
    # 400 training digits / batch 64 = 7 iterations per epoch, each logged by the strategy
    assert log.count("of my custom learning strategy") == 2 * 7
    for rel in ["model.mpk", "checkpoint/model-2.mpk.gz", "train/epoch-2/Loss.log",
                "valid/epoch-2/Accuracy.log"]:  # fmt: skip
        assert (art / rel).is_file(), rel
    loss = [float(x.split(",")[0]) for x in (art / "valid/epoch-2/Loss.log").read_text().split()]
    first = [float(x.split(",")[0]) for x in (art / "valid/epoch-1/Loss.log").read_text().split()]
    assert sum(loss) / len(loss) < sum(first) / len(first)  # it learns
