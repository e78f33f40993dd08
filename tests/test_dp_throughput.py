"""The data-parallel throughput bench's task and a tiny CPU run of it (1 and 2 processes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benches" / "collective"))

from seq_task import make_items

TINY = ["--backend", "ndarray", "--model", "transformer", "--items", "256", "--seq", "16",
        "--d-model", "16", "--layers", "1", "--batch-size", "64", "--epochs", "2"]  # fmt: skip


def test_label_is_the_strictly_most_frequent_class_token():
    items = make_items(300, 32, 20, 5, seed=3)
    assert {item.label for item in items} == set(range(5))
    for item in items:
        counts = Counter(int(t) for t in item.tokens if t < 5)
        top = max(counts.values())
        assert counts[item.label] == top
        assert sum(1 for v in counts.values() if v == top) == 1


def test_items_depend_only_on_the_seed():
    a, b = make_items(20, 16, 10, 3, seed=7), make_items(20, 16, 10, 3, seed=7)
    assert all((x.tokens == y.tokens).all() and x.label == y.label for x, y in zip(a, b))


def _run(nproc: int) -> dict:
    script = str(ROOT / "benches" / "collective" / "dp_throughput.py")
    cmd = [sys.executable, "-m", "burn_train.launch", "--nproc-per-node", str(nproc), script]
    env = {**os.environ, "BURN_NUM_THREADS": "1"}
    out = subprocess.run(
        cmd + TINY, check=False, capture_output=True, text=True, timeout=240, env=env
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads([line for line in out.stdout.splitlines() if line.startswith("{")][-1])


def test_one_and_two_processes_reach_the_same_accuracy():
    one, two = _run(1), _run(2)
    assert (one["world_size"], two["world_size"]) == (1, 2)
    assert one["items_per_s"] > 0 and two["items_per_s"] > 0
    # Same global batches, gradients all-reduced: the same function is learned.
    assert abs(one["valid_accuracy"] - two["valid_accuracy"]) <= 0.5
