"""Every docstring example runs; the data benchmark runs and writes its JSON."""

import doctest
import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import burn_dataset
import pytest

MODULES = ["burn_dataset"] + [
    m.name for m in pkgutil.walk_packages(burn_dataset.__path__, "burn_dataset.")
]
BENCH = Path(__file__).resolve().parents[3] / "benches" / "data" / "bench_data.py"


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"


def test_every_public_symbol_has_a_docstring_with_an_example():
    missing = [
        name
        for name in burn_dataset.__all__
        if "Example" not in (getattr(burn_dataset, name).__doc__ or "")
    ]
    assert missing == []


@pytest.mark.skipif(not BENCH.is_file(), reason="benches/ is not part of this checkout")
def test_bench_quick_run(tmp_path):
    out = tmp_path / "data.json"
    run = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "batches/s" in run.stdout
    rows = json.loads(out.read_text())["results"]
    burn = [r for r in rows if r["framework"] == "burn" and "skipped" not in r]
    assert {(r["loader"], r["num_workers"]) for r in burn} >= {
        ("numpy batcher", 0),
        ("numpy batcher", 2),
    }
    assert all(r["batches_per_s"] > 0 and r["batches_per_epoch"] == 16 for r in burn)
