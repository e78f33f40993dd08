"""Inference as in the book: load config.json and the model record, predict one item."""

from __future__ import annotations

from burn_record import CompactRecorder

from .data import MnistBatcher
from .training import TrainingConfig


def load_model(artifact_dir: str, device):
    config = TrainingConfig.load(f"{artifact_dir}/config.json")
    record = CompactRecorder().load(f"{artifact_dir}/model", device)
    return config.model.init(device).load_record(record)


def infer(artifact_dir: str, device, item, model=None) -> int:
    """Print and return the predicted class of `item`."""
    model = model if model is not None else load_model(artifact_dir, device)
    label = item.label
    batch = MnistBatcher(device).batch([item])
    output = model.forward(batch.images)
    predicted = output.argmax(1).flatten(0, 1).into_scalar()
    print(f"Predicted {predicted} Expected {label}")
    return predicted
