"""The Burn Book's "Custom Training Loops" in burn-py: train a digit classifier without the Learner.

forward -> `CrossEntropyLoss` -> accuracy -> `loss.backward()` ->
`GradientsParams.from_grads(grads, model)` -> `model = optim.step(lr, model, grads)`, and a
validation pass with `model.valid()` after each epoch. `run_data_parallel` is the same loop on
several devices, gradients all-reduced between them. `run(..., capture=True)` runs each step
as `burn.capture(train_step)` on a Fusion backend.
"""

from .data import DigitsBatch, DigitsBatcher
from .model import Model, ModelConfig
from .parallel import run_data_parallel
from .training import EpochMetrics, TrainingConfig, accuracy, run, train_step

__all__ = [
    "DigitsBatch",
    "DigitsBatcher",
    "EpochMetrics",
    "Model",
    "ModelConfig",
    "TrainingConfig",
    "accuracy",
    "run",
    "run_data_parallel",
    "train_step",
]
