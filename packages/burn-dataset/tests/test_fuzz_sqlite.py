"""Fuzzing SQLite dataset files: bytes flipped, cut or appended anywhere in a dataset file.
Reading every item either returns exactly the items written or raises DatasetError (or the
split-not-found ValueError) naming the file; nothing else escapes and nothing hangs.

Examples: 25 fixed ones per storage in CI; `HYPOTHESIS_PROFILE=long`: 10,000 random ones per
storage (`python tests/fuzz_long.py` runs every loader's long fuzz under a memory limit)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from burn_dataset import DatasetError, SqliteDataset, SqliteDatasetWriter

LONG = os.environ.get("HYPOTHESIS_PROFILE") == "long"
FUZZ = settings(
    max_examples=10_000 if LONG else 25,
    derandomize=not LONG,
    deadline=None if LONG else 5000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
ITEMS = [{"y": i % 3, "x": np.arange(i, i + 5, dtype=np.float32), "s": f"n{i}"} for i in range(12)]
_CLEAN: dict[str, bytes] = {}


def _clean(storage: str) -> bytes:
    if storage not in _CLEAN:
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "c.db"
            with SqliteDatasetWriter(path, storage=storage) as w:
                w.write_many("train", ITEMS)
            _CLEAN[storage] = path.read_bytes()
    return _CLEAN[storage]


def _same(a, b) -> bool:
    return (
        isinstance(b, dict)
        and a.keys() == b.keys()
        and a["y"] == b["y"]
        and a["s"] == b["s"]
        and isinstance(b["x"], np.ndarray)
        and b["x"].dtype == np.float32
        and np.array_equal(a["x"], b["x"])
    )


edits = st.lists(
    st.tuples(st.floats(0, 1, exclude_max=True), st.integers(1, 255)), min_size=1, max_size=4
)


@pytest.mark.parametrize("storage", ["blob", "columns"])
@FUZZ
@given(edits=edits, cut=st.one_of(st.none(), st.floats(0, 1)), extra=st.binary(max_size=64))
def test_damaged_dataset_files(storage, edits, cut, extra):
    data = bytearray(_clean(storage))
    for where, xor in edits:
        data[int(where * len(data))] ^= xor
    if cut is not None:
        data = data[: int(cut * len(data))]
    data += extra
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "f.db"
        path.write_bytes(bytes(data))
        try:
            ds = SqliteDataset(path, "train")
            try:
                got = [ds.get(i) for i in range(len(ds))]
            finally:
                ds.close()
        except DatasetError as err:
            assert str(path) in str(err)
            return
        except ValueError as err:
            assert "not found in" in str(err) and str(path) in str(err), err
            return
        assert len(got) == len(ITEMS)
        assert all(_same(a, b) for a, b in zip(ITEMS, got))
