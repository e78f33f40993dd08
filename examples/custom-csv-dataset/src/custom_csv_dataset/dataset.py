"""`DiabetesDataset`: Burn's `examples/custom-csv-dataset/src/dataset.rs`, translated.

The file is Efron et al.'s diabetes table (442 patients, tab-separated, header
`AGE SEX BMI BP S1 S2 S3 S4 S5 S6 Y`). Burn downloads it beside the example; here too, into
the dataset cache, with a clear error naming the URL when offline. `write_synthetic` writes a
stand-in with the same header and column ranges, for offline runs and CI.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from burn_dataset import Dataset, DownloadError, InMemDataset, default_cache_dir
from burn_dataset.vision import download_file

DIABETES_URL = "https://www4.stat.ncsu.edu/~boos/var.select/diabetes.tab.txt"


@dataclass
class DiabetesPatient:
    """One row; the field names are Burn's, the CSV's column names in the comments."""

    age: int  # AGE
    sex: int  # SEX
    bmi: float  # BMI
    bp: float  # BP
    tc: int  # S1: total serum cholesterol
    ldl: float  # S2
    hdl: float  # S3
    tch: float  # S4
    ltg: float  # S5
    glu: int  # S6
    response: int  # Y: disease progression one year later

    @classmethod
    def from_row(cls, **row: str) -> DiabetesPatient:
        """A row of the file by its column names (serde's `#[serde(rename = "AGE")]`)."""
        return cls(
            int(row["AGE"]), int(row["SEX"]), float(row["BMI"]), float(row["BP"]),
            int(row["S1"]), float(row["S2"]), float(row["S3"]), float(row["S4"]),
            float(row["S5"]), int(row["S6"]), int(row["Y"]),
        )  # fmt: skip


class DiabetesDataset(Dataset[DiabetesPatient]):
    """The diabetes table: `DiabetesDataset(path=None)` reads `path`, or the cached download of
    `DIABETES_URL` (downloaded on first use)."""

    def __init__(self, path: str | os.PathLike | None = None) -> None:
        self.path = Path(path) if path is not None else self.download()
        self.dataset = InMemDataset.from_csv(self.path, DiabetesPatient.from_row, delimiter="\t")

    @staticmethod
    def download() -> Path:
        path = default_cache_dir() / "diabetes" / "diabetes.tab.txt"
        if path.exists():
            print(f"File already downloaded at {path}")
            return path
        print(f"Downloading file to {path}")
        try:
            download_file(DIABETES_URL, path, None)
        except DownloadError as err:
            raise DownloadError(
                f"the diabetes table is not in {path.parent} and could not be downloaded from "
                f"{DIABETES_URL} (offline?): {err}. Download it there by hand, pass its path, or "
                "run with --synthetic to use a generated stand-in."
            ) from None
        return path

    def get(self, index: int) -> DiabetesPatient | None:
        return self.dataset.get(index)

    def __len__(self) -> int:
        return len(self.dataset)


def write_synthetic(path: str | os.PathLike, rows: int = 442, seed: int = 0) -> Path:
    """A stand-in table with the real file's header and value ranges (not its values)."""
    rng = np.random.default_rng(seed)
    lines = ["AGE\tSEX\tBMI\tBP\tS1\tS2\tS3\tS4\tS5\tS6\tY"]
    for _ in range(rows):
        lines.append("\t".join([
            str(rng.integers(19, 80)), str(rng.integers(1, 3)), f"{rng.uniform(18, 42.2):.1f}",
            f"{rng.uniform(62, 133):.2f}", str(rng.integers(97, 302)),
            f"{rng.uniform(41.6, 242.4):.1f}", f"{rng.uniform(22, 99):.0f}",
            f"{rng.uniform(2, 9.09):.2f}", f"{rng.uniform(3.2581, 6.107):.4f}",
            str(rng.integers(58, 125)), str(rng.integers(25, 347)),
        ]))  # fmt: skip
    path = Path(path)
    path.write_text("\n".join(lines) + "\n")
    return path
