"""The Evaluator (Burn 0.20's `burn::train::evaluator`): a trained model on a test set, with
metrics, metric logs under `<directory>/test/<name>/` and the renderer."""

from ._builder import EvaluatorBuilder
from ._evaluator import Evaluator

__all__ = ["Evaluator", "EvaluatorBuilder"]
