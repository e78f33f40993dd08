"""Numbers for how good and how varied generated digits are (numpy float64, no model needed).

`diversity`: mean pairwise L2 distance between samples. A collapsed generator gives the same
image 25 times (near 0); real digits give the reference value. `nearest`: each sample's L2
distance to its nearest training digit: near 0 means copied digits, near a real test digit's
distance means new digit-like images, much larger means not digit-like."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def _flat(images: np.ndarray) -> np.ndarray:
    return np.asarray(images, dtype=np.float64).reshape(len(images), -1)


def mean_pairwise_distance(images: np.ndarray) -> float:
    """Mean L2 distance over all pairs `i < j` of `images` `[n, ...]` (n >= 2)."""
    x = _flat(images)
    if len(x) < 2:
        raise ValueError(f"mean_pairwise_distance: needs at least 2 images, got {len(x)}")
    sq = (x * x).sum(1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * x @ x.T, 0.0)
    i, j = np.triu_indices(len(x), k=1)
    return float(np.sqrt(d2[i, j]).mean())


def nearest_distances(images: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """For each of `images` `[n, ...]`, the L2 distance to its nearest image of `reference`."""
    x, r = _flat(images), _flat(reference)
    d2 = (x * x).sum(1)[:, None] + (r * r).sum(1)[None, :] - 2.0 * x @ r.T
    return np.sqrt(np.maximum(d2, 0.0).min(1))


@dataclass(frozen=True)
class SampleReport:
    """`diversity`/`real_diversity`: mean pairwise L2 of the samples / of as many real test
    digits; `nearest`/`real_nearest`: mean distance to the nearest training digit of the samples
    / of those test digits (all images in [-1, 1], 784 pixels)."""

    diversity: float
    real_diversity: float
    nearest: float
    real_nearest: float

    def lines(self) -> list[str]:
        ratio = self.diversity / self.real_diversity
        return [
            f"diversity (mean pairwise L2 of the samples): {self.diversity:.2f} "
            f"(real test digits: {self.real_diversity:.2f}, ratio {ratio:.2f})",
            f"distance to the nearest training digit: samples {self.nearest:.2f} "
            f"(real test digits: {self.real_nearest:.2f})",
        ]


def sample_report(samples: np.ndarray, train: np.ndarray, test: np.ndarray) -> SampleReport:
    """Compare `samples` with the first `len(samples)` of `test`, both against `train`."""
    real = test[: len(samples)]
    return SampleReport(
        diversity=mean_pairwise_distance(samples),
        real_diversity=mean_pairwise_distance(real),
        nearest=float(nearest_distances(samples, train).mean()),
        real_nearest=float(nearest_distances(real, train).mean()),
    )
