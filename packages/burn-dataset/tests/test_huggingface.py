"""HuggingfaceDatasetLoader on local csv/parquet files, fully offline."""

import dataclasses
import sys

import numpy as np
import pytest
from burn_dataset import HuggingfaceDatasetLoader, SqliteDataset


@pytest.fixture
def hf(tmp_path, monkeypatch):
    """The `datasets` module with every Hub access switched off and caches in tmp_path."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    datasets = pytest.importorskip(
        "datasets",
        reason="the `datasets` package is not installed (burn-dataset[huggingface] extra)",
    )
    # The variables are read at import time; patch the parsed values too in case it was imported.
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True, raising=False)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True, raising=False)
    return datasets


@dataclasses.dataclass
class Review:
    text: str
    stars: int
    score: float


def write_csvs(directory):
    (directory / "train.csv").write_text("text,stars,score\ngood,5,0.9\nbad,1,0.1\nok,3,\n")
    (directory / "test.csv").write_text("text,stars,score\nmeh,2,0.4\n")
    return {"train": str(directory / "train.csv"), "test": str(directory / "test.csv")}


def test_csv_files_imported_to_sqlite(hf, tmp_path):
    files = write_csvs(tmp_path)
    loader = (
        HuggingfaceDatasetLoader("csv")
        .with_huggingface_data_files(files)
        .with_huggingface_cache_dir(tmp_path / "hf-cache")
        .with_base_dir(tmp_path / "db")
    )
    train = loader.dataset("train")
    assert isinstance(train, SqliteDataset) and len(train) == 3
    assert train.get(0) == {"text": "good", "stars": 5, "score": 0.9}
    assert train.get(2) == {"text": "ok", "stars": 3, "score": None}  # a null, typed as float
    assert train.get(3) is None
    db = loader.db_file()
    assert db.parent == tmp_path / "db" and db.name.startswith("csv-") and db.is_file()
    test = loader.dataset("test", item_type=Review)
    assert list(test) == [Review("meh", 2, 0.4)]
    with pytest.raises(ValueError, match=r"split 'valid' not found .* \['test', 'train'\]"):
        loader.dataset("valid")


def test_cached_database_is_reused_without_datasets(hf, tmp_path, monkeypatch):
    files = write_csvs(tmp_path)
    loader = (
        HuggingfaceDatasetLoader("csv").with_huggingface_data_files(files).with_base_dir(tmp_path)
    )
    loader.dataset("train")
    monkeypatch.setitem(sys.modules, "datasets", None)  # a second run needs only the SQLite file
    again = (
        HuggingfaceDatasetLoader("csv").with_huggingface_data_files(files).with_base_dir(tmp_path)
    )
    assert again.dataset("test").get(0)["text"] == "meh"
    other = HuggingfaceDatasetLoader("csv").with_huggingface_data_files({"train": files["test"]})
    assert other.with_base_dir(tmp_path).db_file() != loader.db_file()  # different files, new cache


def test_parquet_with_list_and_bool_columns(hf, tmp_path):
    table = hf.Dataset.from_dict(
        {"tokens": [[1, 2], [3]], "flag": [True, False], "name": ["a", "b"]}
    )
    table.to_parquet(str(tmp_path / "train.parquet"))
    ds = (
        HuggingfaceDatasetLoader("parquet")
        .with_huggingface_data_files({"train": str(tmp_path / "train.parquet")})
        .with_huggingface_cache_dir(tmp_path / "hf-cache")
        .with_base_dir(tmp_path / "db")
        .dataset("train")
    )
    assert list(ds) == [
        {"tokens": [1, 2], "flag": True, "name": "a"},
        {"tokens": [3], "flag": False, "name": "b"},
    ]


def test_local_folder_with_subset_name(hf, tmp_path):
    data = tmp_path / "my_data"
    data.mkdir()
    write_csvs(data)
    loader = (
        HuggingfaceDatasetLoader(str(data))
        .with_huggingface_cache_dir(tmp_path / "hf-cache")
        .with_base_dir(tmp_path / "db")
    )
    assert [row["stars"] for row in loader.dataset("train")] == [5, 1, 3]
    named = HuggingfaceDatasetLoader("user/name").with_subset("en").with_base_dir(tmp_path)
    assert named.db_file() == tmp_path / "user_name-en.db"


def test_image_feature_stored_as_encoded_bytes(hf, tmp_path):
    pil = pytest.importorskip("PIL.Image", reason="Pillow is not installed ([vision] extra)")
    import io

    png = io.BytesIO()
    pil.fromarray(np.full((2, 3), 77, np.uint8)).save(png, format="PNG")
    table = hf.Dataset.from_dict(
        {"image": [{"bytes": png.getvalue(), "path": None}], "label": [4]},
        features=hf.Features({"image": hf.Image(), "label": hf.ClassLabel(num_classes=5)}),
    )
    table.to_parquet(str(tmp_path / "train.parquet"))
    ds = (
        HuggingfaceDatasetLoader("parquet")
        .with_huggingface_data_files({"train": str(tmp_path / "train.parquet")})
        .with_huggingface_cache_dir(tmp_path / "hf-cache")
        .with_base_dir(tmp_path / "db")
        .dataset("train")
    )
    item = ds.get(0)
    assert item["label"] == 4
    assert np.all(np.asarray(pil.open(io.BytesIO(item["image"]))) == 77)


def test_bad_name():
    with pytest.raises(ValueError, match="dataset name must be a non-empty string"):
        HuggingfaceDatasetLoader("")
