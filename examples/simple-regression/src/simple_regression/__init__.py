"""Burn's simple-regression example in burn-py.

An MLP (`Linear(8, 64)`, ReLU, `Linear(64, 1)`) predicts the median house value of a synthetic
stand-in for the California housing data (see `dataset.py` for the formula), with min-max
normalized features, trained by the Learner on `RegressionOutput`s.
"""

from .dataset import (
    FEATURES_MAX,
    FEATURES_MIN,
    NUM_FEATURES,
    HousingBatch,
    HousingBatcher,
    HousingDataset,
    HousingDistrictItem,
    Normalizer,
    generate_housing_items,
)
from .inference import infer
from .model import RegressionModel, RegressionModelConfig
from .training import ExpConfig, run

__all__ = [
    "FEATURES_MAX",
    "FEATURES_MIN",
    "NUM_FEATURES",
    "ExpConfig",
    "HousingBatch",
    "HousingBatcher",
    "HousingDataset",
    "HousingDistrictItem",
    "Normalizer",
    "RegressionModel",
    "RegressionModelConfig",
    "generate_housing_items",
    "infer",
    "run",
]
