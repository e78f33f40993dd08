"""Damaged SQLite dataset files: every single-bit flip either leaves the items intact or raises
DatasetError naming the file (and the row); a file that is not a database is named."""

from __future__ import annotations

import random
import sqlite3

import numpy as np
import pytest

from burn_dataset import DatasetError, SqliteDataset, SqliteDatasetWriter

ITEMS = [
    {
        "label": i % 10,
        "weight": i / 7,
        "name": f"item-{i}",
        "image": np.arange(i, i + 12, dtype=np.uint8),
    }
    for i in range(40)
]


def _write(path, storage):
    with SqliteDatasetWriter(path, storage=storage) as w:
        w.write_many("train", ITEMS)
    return path.read_bytes()


def _same(a, b) -> bool:
    if a.keys() != b.keys():
        return False
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, np.ndarray):
            if not (isinstance(y, np.ndarray) and x.dtype == y.dtype and np.array_equal(x, y)):
                return False
        elif type(x) is not type(y) or x != y:
            return False
    return True


@pytest.mark.parametrize("storage", ["blob", "columns"])
def test_single_bit_flips_never_return_wrong_items(tmp_path, storage):
    clean = _write(tmp_path / "clean.db", storage)
    rng = random.Random(1234)
    outcomes = {"intact": 0, "refused": 0}
    for trial in range(200):
        data = bytearray(clean)
        bit = rng.randrange(len(data) * 8)
        data[bit // 8] ^= 1 << (bit % 8)
        path = tmp_path / f"flip{trial}.db"
        path.write_bytes(bytes(data))
        try:
            ds = SqliteDataset(path, "train")
            got = [ds.get(i) for i in range(len(ds))] + ds.get_many(list(range(len(ds))))
            ds.close()
        except DatasetError as err:
            assert str(path) in str(err)
            outcomes["refused"] += 1
            continue
        except ValueError as err:  # the split's table renamed by the flip: named with the file
            assert "not found in" in str(err) and str(path) in str(err)
            outcomes["refused"] += 1
            continue
        assert len(got) == 2 * len(ITEMS), f"flip of bit {bit}: {len(got)} items"
        for want, have in zip(ITEMS + ITEMS, got):
            assert _same(want, have), f"flip of bit {bit} returned a wrong item: {have}"
        outcomes["intact"] += 1
    assert outcomes["refused"] > 0 and outcomes["intact"] > 0, outcomes


def test_not_a_database_is_named(tmp_path):
    path = tmp_path / "junk.db"
    path.write_bytes(b"SQLite format 3\0" + bytes(range(256)) * 16)
    with pytest.raises(DatasetError, match=r"junk\.db: not a readable SQLite dataset"):
        SqliteDataset(path, "train")


def test_damaged_row_names_file_split_and_row(tmp_path):
    path = tmp_path / "d.db"
    _write(path, "blob")
    conn = sqlite3.connect(path)
    conn.execute("UPDATE train SET item = ? WHERE row_id = 4", (b"\xc1",))
    conn.commit()
    conn.close()
    ds = SqliteDataset(path, "train")
    assert _same(ds.get(2), ITEMS[2])
    with pytest.raises(DatasetError, match=r"d\.db, split 'train', row 3 \(row_id 4\): checksum"):
        ds.get(3)


def test_rows_without_checksums_still_load(tmp_path):
    # A file from before the checksum column (or one whose column was dropped).
    path = tmp_path / "old.db"
    _write(path, "columns")
    conn = sqlite3.connect(path)
    conn.execute("ALTER TABLE train DROP COLUMN __crc32__")
    conn.commit()
    conn.close()
    ds = SqliteDataset(path, "train")
    assert all(_same(ds.get(i), ITEMS[i]) for i in range(len(ITEMS)))


def test_a_field_named_like_the_checksum_is_refused(tmp_path):
    with SqliteDatasetWriter(tmp_path / "x.db", storage="columns") as w:
        with pytest.raises(ValueError, match="reserved for the row checksum"):
            w.write("train", {"__crc32__": 1})


def test_damaged_layout_record_names_the_file(tmp_path):
    # Found by the long fuzz: a flipped bit in the storage name of the layout record.
    path = tmp_path / "d.db"
    _write(path, "blob")
    conn = sqlite3.connect(path)
    conn.execute("UPDATE __burn_dataset_meta__ SET storage = 'bmob'")
    conn.commit()
    conn.close()
    with pytest.raises(DatasetError, match=r"d\.db: not a readable SQLite dataset.*damaged layout"):
        SqliteDataset(path, "train")
