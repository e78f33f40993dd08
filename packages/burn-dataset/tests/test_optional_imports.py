"""Optional extras are imported lazily and a missing one is named in the error."""

import sys

import pytest
from burn_dataset import HuggingfaceDatasetLoader, ImageFolderDataset


def test_missing_pillow_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)  # makes `import PIL` raise ImportError
    with pytest.raises(ImportError, match=r"pip install 'burn-dataset\[vision\]'"):
        ImageFolderDataset([], [])


def test_missing_datasets_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "datasets", None)
    loader = HuggingfaceDatasetLoader("dbpedia_14").with_base_dir(tmp_path)
    with pytest.raises(ImportError, match=r"pip install 'burn-dataset\[huggingface\]'"):
        loader.dataset("train")
    assert not any(tmp_path.iterdir())


def test_importing_burn_dataset_does_not_import_the_extras():
    code = "import sys, burn_dataset; print('datasets' in sys.modules, 'PIL' in sys.modules)"
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
