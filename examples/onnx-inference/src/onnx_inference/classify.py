"""Import `model/guide_digits.onnx` with ModelGen (once) and classify the 360 test digits."""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from burn_dataset.vision import DigitsDataset
from burn_import.onnx import ModelGen
from burn_tensor import Tensor

MODEL_DIR = Path(__file__).resolve().parents[2] / "model"
ONNX_FILE = MODEL_DIR / "guide_digits.onnx"


@dataclass
class Result:
    predictions: list[int]
    correct: int
    total: int

    @property
    def accuracy(self) -> float:
        return 100.0 * self.correct / self.total


def generate(out_dir: Path | None = None, force: bool = False) -> Path:
    """Run ModelGen on the ONNX file unless the generated module is newer (Burn's build.rs step)."""
    out_dir = Path(out_dir) if out_dir is not None else MODEL_DIR.parent / "generated"
    py = out_dir / "guide_digits.py"
    if force or not py.is_file() or py.stat().st_mtime < ONNX_FILE.stat().st_mtime:
        ModelGen().input(ONNX_FILE).out_dir(out_dir).run()
    return py


def load_model(py: Path, device):
    spec = importlib.util.spec_from_file_location("guide_digits_generated", py)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod.Model.from_file(device=device)


def test_batch() -> tuple[np.ndarray, np.ndarray]:
    """The digits test split, normalized as the guide's MnistBatcher does: `[360, 28, 28]`."""
    test = DigitsDataset.test()
    items = [test.get(i) for i in range(len(test))]
    images = np.stack([np.asarray(it.image, dtype=np.float32) for it in items])
    images = ((images / 255.0) - 0.1307) / 0.3081
    return images.astype(np.float32), np.array([it.label for it in items])


def classify(device, out_dir: Path | None = None) -> Result:
    model = load_model(generate(out_dir), device)
    images, labels = test_batch()
    logits = model.forward(Tensor.from_data(images, device))
    pred = np.asarray(logits.argmax(1).numpy()).reshape(-1)
    return Result(pred.tolist(), int((pred == labels).sum()), len(labels))


def guide_result() -> dict:
    """The guide model's own predictions on the same items (written by export_onnx.py)."""
    return json.loads((MODEL_DIR / "guide_accuracy.json").read_text())
