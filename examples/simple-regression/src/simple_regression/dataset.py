"""A synthetic stand-in for the California housing data, and the min-max normalizing batcher.

Burn's example downloads California housing (20,640 districts); burn-py runs offline, so the
districts are generated with a fixed seed. Features are drawn uniformly from `FEATURES_MIN` ..
`FEATURES_MAX` (house age and population rounded to integers) and the target, the median house
value in units of $100,000, is

    value = 0.35 * median_income + 0.005 * house_age + 0.05 * avg_rooms - 0.1 * avg_bedrooms
            - 0.05 * avg_occupancy
            + 1.5 * exp(-((latitude - 34.0)^2 + (longitude + 118.3)^2) / 4)   # Los Angeles
            + 1.0 * exp(-((latitude - 37.7)^2 + (longitude + 122.4)^2) / 2)   # San Francisco
            + noise,  noise ~ Normal(0, 0.1),

clipped to [0.15, 5.0] like the original's capped values.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass

import numpy as np
from burn_dataset import InMemDataset
from burn_tensor import Tensor

NUM_FEATURES = 8
#: Per-feature bounds (the generator's ranges), used by the min-max normalizer as in Burn.
FEATURES_MIN = [0.5, 1.0, 2.0, 0.8, 3.0, 1.0, 32.5, -124.4]
FEATURES_MAX = [15.0, 52.0, 10.0, 2.0, 5000.0, 6.0, 42.0, -114.3]
#: Split sizes of `HousingDataset`: train, validation, test.
SPLITS = {"train": (0, 1600), "validation": (1600, 1800), "test": (1800, 2000)}


@dataclass(frozen=True)
class HousingDistrictItem:
    """One district: 8 features and the target `median_house_value` ($100,000)."""

    median_income: float
    house_age: float
    avg_rooms: float
    avg_bedrooms: float
    population: float
    avg_occupancy: float
    latitude: float
    longitude: float
    median_house_value: float


def generate_housing_items(n: int = 2000, seed: int = 0) -> list[HousingDistrictItem]:
    """`n` districts from the documented formula (module docstring), reproducible by `seed`."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(FEATURES_MIN, FEATURES_MAX, size=(n, NUM_FEATURES))
    x[:, [1, 4]] = np.round(x[:, [1, 4]])
    inc, age, rooms, beds, _pop, occ, lat, lon = x.T
    y = (
        0.35 * inc
        + 0.005 * age
        + 0.05 * rooms
        - 0.1 * beds
        - 0.05 * occ
        + 1.5 * np.exp(-((lat - 34.0) ** 2 + (lon + 118.3) ** 2) / 4)
        + 1.0 * np.exp(-((lat - 37.7) ** 2 + (lon + 122.4) ** 2) / 2)
        + rng.normal(0.0, 0.1, n)
    )
    y = np.clip(y, 0.15, 5.0)
    return [HousingDistrictItem(*map(float, row), float(v)) for row, v in zip(x, y)]


class HousingDataset:
    """`train()` (1,600 items), `validation()` (200) and `test()` (200) of the generated data."""

    @staticmethod
    def _split(name: str) -> InMemDataset:
        start, end = SPLITS[name]
        return InMemDataset(generate_housing_items()[start:end])

    @classmethod
    def train(cls) -> InMemDataset:
        return cls._split("train")

    @classmethod
    def validation(cls) -> InMemDataset:
        return cls._split("validation")

    @classmethod
    def test(cls) -> InMemDataset:
        return cls._split("test")


class Normalizer:
    """Min-max normalization `(x - min) / (max - min)` with per-feature tensors `[1, 8]`."""

    def __init__(self, device, min_: list[float] = FEATURES_MIN, max_: list[float] = FEATURES_MAX):
        self.min = Tensor.from_data(np.array([min_], dtype=np.float32), device)
        self.max = Tensor.from_data(np.array([max_], dtype=np.float32), device)

    def normalize(self, inputs: Tensor) -> Tensor:
        return (inputs - self.min) / (self.max - self.min)


@dataclass
class HousingBatch:
    inputs: Tensor  # [batch, 8] Float, normalized
    targets: Tensor  # [batch] Float


class HousingBatcher:
    """Items -> normalized `[batch, 8]` inputs and `[batch]` targets on the loader's device."""

    def __init__(self, device=None):
        self.device = device
        self._normalizers: dict = {}

    def batch(self, items: list[HousingDistrictItem], device=None) -> HousingBatch:
        device = device if device is not None else self.device
        if device not in self._normalizers:
            self._normalizers[device] = Normalizer(device)
        rows = np.array([astuple(item) for item in items], dtype=np.float32)
        inputs = Tensor.from_data(rows[:, :NUM_FEATURES], device)
        targets = Tensor.from_data(rows[:, NUM_FEATURES], device)
        return HousingBatch(self._normalizers[device].normalize(inputs), targets)
