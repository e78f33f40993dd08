"""Example CLIs and backends (issue 32 items 5 and 6): the default is the registry's choice,
each run says which backend it uses, a misspelled name suggests the closest, user errors are
one line with exit code 2, `guide infer` before training says to train first, and a quick run
does not overwrite the trained model's folder."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from burn_tensor import BackendNotInstalledError, default_backend_name, resolve_backend
from guide.cli import main as guide


def test_a_misspelled_backend_suggests_the_closest():
    with pytest.raises(BackendNotInstalledError, match="did you mean 'ndarray'"):
        resolve_backend("ndaray")


def test_burn_backend_picks_the_default(monkeypatch):
    monkeypatch.setenv("BURN_BACKEND", "ndarray")
    assert default_backend_name() == "ndarray"
    monkeypatch.setenv("BURN_BACKEND", "opencll")
    with pytest.raises(BackendNotInstalledError, match="did you mean 'opencl'"):
        default_backend_name()


def test_guide_cli_error_is_one_line_and_exit_2(tmp_path, capsys):
    assert guide(["train", "--backend", "ndaray", "--artifact-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("guide: error: no backend is named 'ndaray'")


def test_guide_infer_before_training_says_train_first(tmp_path, capsys):
    assert guide(["infer", "--artifact-dir", str(tmp_path / "nothing")]) == 2
    assert "run `guide train` first" in capsys.readouterr().err


def test_guide_quick_run_gets_its_own_folder_and_names_the_backend(tmp_path):
    env = {**os.environ, "BURN_BACKEND": "ndarray"}
    code = "import sys; from guide.cli import main; sys.exit(main())"
    out = subprocess.run(
        [sys.executable, "-c", code, "train", "--limit", "64", "--epochs", "1"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "backend: ndarray (device Cpu" in out.stdout
    assert (tmp_path / "artifacts/guide-quick/config.json").is_file()
    assert not (tmp_path / "artifacts/guide").exists()
    assert "saved in artifacts/guide-quick" in out.stdout
