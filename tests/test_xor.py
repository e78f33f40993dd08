"""XOR example (tutorial Steps 10-11): 100 % with a fixed seed, save, reload in a fresh process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from burn_autodiff import Autodiff
from burn_ndarray import NdArray
from burn_optim import AdamConfig
from xor import TrainingConfig, XorBatcher, XorModelConfig, load_model, make_xor_dataset, predict
from xor.cli import main
from xor.inference import logits


def _predictions_line(stdout: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith("Predictions"))


def test_dataset_and_batcher():
    device = NdArray().device()
    ds = make_xor_dataset(3)
    assert len(ds) == 12
    batch = XorBatcher(device).batch([ds.get(i) for i in range(4)])
    assert batch.inputs.dims() == [4, 2]
    assert batch.targets.tolist() == [0, 1, 1, 0]


def test_train_reaches_100_percent_and_reload_matches(tmp_path: Path):
    from xor import train

    device = Autodiff(NdArray()).device()
    lines: list[str] = []
    config = TrainingConfig(XorModelConfig(), AdamConfig(), seed=42)
    result = train(str(tmp_path), config, device, log=lines.append)
    assert result.predictions == [0, 1, 1, 0]
    assert result.accuracy == 100.0
    assert result.losses[-1] < result.losses[0]
    assert (tmp_path / "model.mpk.gz").is_file() and (tmp_path / "config.json").is_file()
    assert "early stop" in lines[-1]

    inner = device.inner()
    loaded = load_model(str(tmp_path), inner)
    assert predict(loaded, inner) == result.predictions
    # CompactRecorder stores half precision: logits agree to that precision.
    trained, reloaded = logits(result.model, inner).numpy(), logits(loaded, inner).numpy()
    assert abs(trained - reloaded).max() < 5e-2

    # Same seed, same run.
    again = train(None, config, device, log=lambda _: None)
    assert again.losses == result.losses


def test_cli_train_then_infer_in_fresh_process(tmp_path: Path, capsys):
    art = str(tmp_path / "xor")
    assert main(["train", "--artifact-dir", art]) == 0
    trained = _predictions_line(capsys.readouterr().out)
    assert trained.endswith("[0, 1, 1, 0]")
    # The installed console script when present (uv sync), else the module.
    script = Path(sys.executable).with_name("xor")
    cmd = [str(script)] if script.is_file() else [sys.executable, "-m", "xor.cli"]
    proc = subprocess.run(
        cmd + ["infer", "--artifact-dir", art],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert _predictions_line(proc.stdout) == trained
    assert "Accuracy: 100.0 %" in proc.stdout
