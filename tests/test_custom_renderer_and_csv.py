"""Burn's custom-renderer and custom-csv-dataset examples, quick modes (their README commands):
the renderer receives every train, valid and test progress update; the CSV rows become
dataclass items, and offline the download error names the URL."""

from __future__ import annotations

from pathlib import Path

from custom_csv_dataset import DIABETES_URL, DiabetesDataset, DiabetesPatient, write_synthetic
from custom_csv_dataset.cli import main as csv_main
from custom_renderer.cli import main as renderer_main


def test_custom_renderer_quick_mode(tmp_path: Path, capsys):
    assert renderer_main(["--epochs", "1", "--limit", "256", "--artifact-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # 256 train digits / 64 = 4 train updates, 64 test digits = 1 valid and 1 test update
    assert "rendered {'train': 4, 'valid': 1, 'test': 1}" in out
    assert "train: TrainingProgress(progress=Progress(items_processed=256, items_total=256)" in out
    assert "test: EvaluationProgress(" in out
    assert (tmp_path / "test/digits-test/Accuracy.log").is_file()
    assert not (tmp_path / "experiment.log").exists()  # with_application_logger(None)


def test_custom_csv_dataset_rows(tmp_path: Path, capsys, monkeypatch):
    path = tmp_path / "d.tab.txt"
    path.write_text("AGE\tSEX\tBMI\tBP\tS1\tS2\tS3\tS4\tS5\tS6\tY\n"
                    "59\t2\t32.1\t101\t157\t93.2\t38\t4\t4.8598\t87\t151\n"
                    "48\t1\t21.6\t87\t183\t103.2\t70\t3\t3.8918\t69\t75\n")  # fmt: skip
    ds = DiabetesDataset(path)
    assert len(ds) == 2
    assert ds.get(0) == DiabetesPatient(59, 2, 32.1, 101.0, 157, 93.2, 38.0, 4.0, 4.8598, 87, 151)
    assert csv_main(["--synthetic"]) == 0
    assert "Dataset loaded with 442 rows" in capsys.readouterr().out
    assert len(DiabetesDataset(write_synthetic(tmp_path / "s.tsv", rows=5))) == 5
    monkeypatch.setenv("BURN_DATASET_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr("custom_csv_dataset.dataset.DIABETES_URL", "http://127.0.0.1:9/d.txt")
    assert csv_main([]) == 2
    err = capsys.readouterr().err
    assert "http://127.0.0.1:9/d.txt" in err and "--synthetic" in err
    assert DIABETES_URL.startswith("https://www4.stat.ncsu.edu/")
