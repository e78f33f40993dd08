"""Load the committed PyTorch weights into `DigitsNet` and evaluate it on the digits test split."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from burn_dataset.vision import DigitsDataset
from burn_import import LoadArgs, PyTorchFileRecorder, SafetensorsFileRecorder
from burn_record import FullPrecisionSettings
from burn_tensor import Tensor

from .model import DigitsNet

# The weights and the accuracy PyTorch reached, written by generate_weights.py.
WEIGHTS = Path(__file__).resolve().parents[2] / "weights"


@dataclass
class Evaluation:
    source: str  # the file the weights came from
    predictions: list[int]
    correct: int
    total: int

    @property
    def accuracy(self) -> float:
        return 100.0 * self.correct / self.total


def test_images() -> tuple[np.ndarray, np.ndarray]:
    """The 360 test digits as `[360, 1, 28, 28]` float32 in 0..1, and their labels."""
    test = DigitsDataset.test()
    items = [test.get(i) for i in range(len(test))]
    images = np.stack([item.image for item in items]).astype(np.float32)[:, None] / 255.0
    return images, np.array([item.label for item in items])


def load_model(path: str | Path, device) -> DigitsNet:
    """`DigitsNet` with weights from a `.pt` or `.safetensors` file written by PyTorch."""
    path = Path(path)
    model = DigitsNet.init(device)
    recorder = SafetensorsFileRecorder if path.suffix == ".safetensors" else PyTorchFileRecorder
    record = recorder(FullPrecisionSettings).load(LoadArgs(path), device, target=model)
    return model.load_record(record)


def evaluate(path: str | Path, device) -> Evaluation:
    model = load_model(path, device)
    images, labels = test_images()
    logits = model.forward(Tensor.from_data(images, device))
    predictions = logits.argmax(1).numpy().reshape(-1)
    correct = int((predictions == labels).sum())
    return Evaluation(Path(path).name, predictions.tolist(), correct, len(labels))


def torch_result(weights: Path = WEIGHTS) -> dict:
    """What PyTorch measured on the same 360 digits (accuracy and every prediction)."""
    return json.loads((weights / "accuracy.json").read_text())
