"""XOR in burn-py: the Burn foundations tutorial's Steps 10 and 11.

A manual training loop (no Learner) on the XOR truth table, then saving with `CompactRecorder`
and loading the model again in a fresh process (`xor train`, then `xor infer`).
"""

from .data import XOR_INPUTS, XorBatch, XorBatcher, XorItem, make_xor_dataset
from .inference import load_model, predict
from .model import XorModel, XorModelConfig
from .training import TrainingConfig, TrainingResult, train

__all__ = [
    "XOR_INPUTS",
    "TrainingConfig",
    "TrainingResult",
    "XorBatch",
    "XorBatcher",
    "XorItem",
    "XorModel",
    "XorModelConfig",
    "load_model",
    "make_xor_dataset",
    "predict",
    "train",
]
