"""Burn's custom-learning-strategy example: Burn 0.20's `SupervisedTraining` with a
`SupervisedLearningStrategy` that writes its own epoch loop."""

from .training import MnistTrainingConfig, MyCustomLearningStrategy, run

__all__ = ["MnistTrainingConfig", "MyCustomLearningStrategy", "run"]
