"""import-weights: a digits classifier trained with PyTorch, evaluated in burn-py without torch.

Example:
    >>> from burn_ndarray import NdArray
    >>> from import_weights import WEIGHTS, evaluate
    >>> evaluate(WEIGHTS / "digits_net.safetensors", NdArray().device()).total
    360
"""

from .evaluate import WEIGHTS, Evaluation, evaluate, load_model, test_images, torch_result
from .model import DigitsNet

__all__ = [
    "WEIGHTS",
    "DigitsNet",
    "Evaluation",
    "evaluate",
    "load_model",
    "test_images",
    "torch_result",
]
