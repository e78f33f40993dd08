"""Burn's custom-image-dataset example: images in class folders (`ImageFolderDataset`) and the
CIFAR-10 CNN, trained with `SupervisedTraining`."""

from .data import ClassificationBatch, ClassificationBatcher, Normalizer, generate_image_folder
from .model import Cnn
from .training import run

__all__ = [
    "ClassificationBatch",
    "ClassificationBatcher",
    "Cnn",
    "Normalizer",
    "generate_image_folder",
    "run",
]
