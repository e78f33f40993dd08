"""Burn's custom-csv-dataset example: a tab-separated file read into an `InMemDataset`."""

from .dataset import DIABETES_URL, DiabetesDataset, DiabetesPatient, write_synthetic

__all__ = ["DIABETES_URL", "DiabetesDataset", "DiabetesPatient", "write_synthetic"]
