"""Loading a saved XOR model (tutorial Step 11) and predicting the four XOR inputs."""

from __future__ import annotations

from burn_record import CompactRecorder
from burn_tensor import Tensor

from .data import XOR_INPUTS
from .model import XorModel

#: The XOR labels of `XOR_INPUTS`.
XOR_LABELS: list[int] = [0, 1, 1, 0]


def load_model(artifact_dir: str, device) -> XorModel:
    """A fresh model from config.json, then the weights from model.mpk.gz (CompactRecorder)."""
    from .training import TrainingConfig

    config = TrainingConfig.load(f"{artifact_dir}/config.json")
    return config.model.init(device).load_file(f"{artifact_dir}/model", CompactRecorder(), device)


def logits(model: XorModel, device) -> Tensor:
    """Logits `[4, 2]` of the model on `XOR_INPUTS`."""
    return model.forward(Tensor.from_data(XOR_INPUTS, device))


def predict(model: XorModel, device) -> list[int]:
    """Predicted class of each of `XOR_INPUTS` (should be 0, 1, 1, 0)."""
    return [int(c) for c in logits(model, device).argmax(1).flatten(0, 1).tolist()]


def accuracy(predictions: list[int]) -> float:
    """Percentage of `predictions` equal to `XOR_LABELS`."""
    return 100.0 * sum(p == y for p, y in zip(predictions, XOR_LABELS)) / len(XOR_LABELS)
