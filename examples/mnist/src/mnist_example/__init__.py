"""Burn's mnist example: conv blocks with batch norm trained with `SupervisedTraining`
(checkpoints, early stopping, learning-rate metric), evaluated with the `Evaluator`, saved as
a Burnpack that Rust Burn can read."""

from .model import ConvBlock, Model
from .training import MnistBatch, MnistBatcher, evaluate_weights, run

__all__ = ["ConvBlock", "MnistBatch", "MnistBatcher", "Model", "evaluate_weights", "run"]
