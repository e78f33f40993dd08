"""Inference as in Burn's example: load the saved model, predict a few test districts."""

from __future__ import annotations

from burn_record import CompactRecorder

from .dataset import HousingBatcher
from .training import ExpConfig


def infer(artifact_dir: str, device, items: list, log=print) -> list[tuple[float, float]]:
    """Print and return `(predicted, expected)` median house values for `items`.

    Args:
        device: an inference device (e.g. `NdArray().device()`).
        items: `HousingDistrictItem`s.
    """
    config = ExpConfig.load(f"{artifact_dir}/config.json")
    model = config.model.init(device).load_file(f"{artifact_dir}/model", CompactRecorder(), device)
    batch = HousingBatcher(device).batch(items)
    predicted = model.forward(batch.inputs).flatten(0, 1).tolist()
    expected = batch.targets.tolist()
    for p, e in zip(predicted, expected):
        log(f"Predicted {p:.2f} Expected {e:.2f}")
    return list(zip(predicted, expected))
