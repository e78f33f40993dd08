"""SqliteDataset / SqliteDatasetWriter / SqliteDatasetStorage on real SQLite files."""

import dataclasses
import os
import pickle
import sqlite3
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
from burn_dataset import (
    DataLoaderBuilder,
    SqliteDataset,
    SqliteDatasetStorage,
    SqliteDatasetWriter,
)


@dataclasses.dataclass
class Row:
    text: str
    label: int


def test_blob_storage_round_trips_nested_items_and_arrays(tmp_path):
    path = tmp_path / "d.db"
    image = np.arange(12, dtype=np.float32).reshape(3, 4)
    with SqliteDatasetWriter(path) as writer:
        assert writer.write("train", {"image": image, "label": 3, "tags": ["a", None]}) == 0
        assert writer.write("train", [1, (2, 3), {"k": b"\x00"}]) == 1
        assert writer.write("test", "plain") == 0
    train = SqliteDataset.from_db_file(path, "train")
    assert len(train) == 2
    first = train.get(0)
    assert first["label"] == 3 and first["tags"] == ["a", None]
    assert first["image"].dtype == np.float32 and np.array_equal(first["image"], image)
    first["image"][0, 0] = 99  # items are independent, writable copies
    assert train.get(0)["image"][0, 0] == 0
    assert train.get(1) == [1, [2, 3], {"k": b"\x00"}]  # msgpack turns tuples into lists
    assert train.get(2) is None
    assert list(SqliteDataset(path, "test")) == ["plain"]


def test_column_storage_keeps_types(tmp_path):
    path = tmp_path / "c.db"
    rows = [
        {"text": "a", "label": 1, "score": 0.5, "ok": True, "raw": b"\x01", "vec": np.ones(2)},
        {"text": "b", "label": 2, "score": 1, "ok": False, "raw": None, "vec": None},
    ]
    with SqliteDatasetWriter(path, storage="columns") as writer:
        assert writer.write_many("train", rows) == 2
    ds = SqliteDataset(path, "train")
    got = ds.get(0)
    assert got["ok"] is True and got["score"] == 0.5 and got["raw"] == b"\x01"
    assert np.array_equal(got["vec"], np.ones(2))
    second = ds.get(1)
    assert second["score"] == 1.0 and isinstance(second["score"], float)
    assert second["ok"] is False and second["raw"] is None and second["vec"] is None
    # plain SQL works on column storage
    conn = sqlite3.connect(path)
    assert conn.execute('SELECT text FROM "train" WHERE label = 2').fetchone() == ("b",)
    conn.close()


def test_dataclass_items_and_item_type(tmp_path):
    path = tmp_path / "dc.db"
    for storage in ("blob", "columns"):
        with SqliteDatasetWriter(path, overwrite=True, storage=storage) as writer:
            writer.write_many("train", [Row("x", 0), Row("y", 1)])
        ds = SqliteDataset(path, "train", item_type=Row)
        assert list(ds) == [Row("x", 0), Row("y", 1)]
        assert ds.get_many([1, 1, 0]) == [Row("y", 1), Row("y", 1), Row("x", 0)]


def test_get_many_spans_several_queries(tmp_path):
    path = tmp_path / "many.db"
    with SqliteDatasetWriter(path) as writer:
        writer.write_many("train", range(2000))
    ds = SqliteDataset(path, "train")
    indices = list(range(1999, -1, -1))
    assert ds.get_many(indices) == indices
    with pytest.raises(IndexError, match="index 2000 out of range for dataset of length 2000"):
        ds.get_many([2000])


def test_writer_errors(tmp_path):
    path = tmp_path / "e.db"
    with SqliteDatasetWriter(path, storage="columns") as writer:
        writer.write("train", {"a": 1})
        with pytest.raises(TypeError, match=r"column 'a' holds int values .* got str"):
            writer.write("train", {"a": "x"})
        with pytest.raises(ValueError, match=r"item fields \['b'\] differ from split 'train'"):
            writer.write("train", {"b": 1})
        with pytest.raises(TypeError, match="must be a dataclass instance or a dict, got int"):
            writer.write("other", 5)
        with pytest.raises(ValueError, match="'row_id' is reserved"):
            writer.write("x", {"row_id": 1})
        with pytest.raises(ValueError, match="split name must be"):
            writer.write("bad name;", {"a": 1})
    with pytest.raises(FileExistsError, match="already exists; pass overwrite=True"):
        SqliteDatasetWriter(path)
    with pytest.raises(ValueError, match="storage must be one of"):
        SqliteDatasetWriter(tmp_path / "z.db", storage="json")
    writer = SqliteDatasetWriter(tmp_path / "done.db")
    writer.set_completed()
    with pytest.raises(RuntimeError, match="completed or closed"):
        writer.write("train", 1)
    with pytest.raises(TypeError, match="cannot serialize object"):
        with SqliteDatasetWriter(tmp_path / "obj.db") as w:
            w.write("train", object())


def test_declare_split(tmp_path):
    path = tmp_path / "decl.db"
    with SqliteDatasetWriter(path, storage="columns") as writer:
        writer.declare_split("train", {"x": "float", "y": "bool"})
        writer.write("train", {"x": None, "y": None})
        writer.write("train", {"x": 2, "y": True})
        with pytest.raises(ValueError, match="encoding must be one of"):
            writer.declare_split("test", {"x": "decimal"})
        with pytest.raises(ValueError, match="already exists"):
            writer.declare_split("train", {"x": "int"})
    assert list(SqliteDataset(path, "train")) == [{"x": None, "y": None}, {"x": 2.0, "y": True}]
    with pytest.raises(ValueError, match="only applies to storage='columns'"):
        SqliteDatasetWriter(tmp_path / "b.db").declare_split("s", {"x": "int"})


def test_incomplete_writes_never_appear(tmp_path):
    path = tmp_path / "partial.db"
    with pytest.raises(RuntimeError, match="boom"):
        with SqliteDatasetWriter(path) as writer:
            writer.write("train", 1)
            assert not path.exists()  # still in a temporary file
            raise RuntimeError("boom")
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []  # temporary file removed too


def test_reader_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="SQLite dataset file not found"):
        SqliteDataset(tmp_path / "nope.db", "train")
    path = tmp_path / "d.db"
    with SqliteDatasetWriter(path) as writer:
        writer.write("train", 1)
        writer.write("valid", 2)
    with pytest.raises(
        ValueError, match=r"split 'test' not found .* available splits: \['train', 'valid'\]"
    ):
        SqliteDataset(path, "test")


def test_storage_names_and_paths(tmp_path):
    storage = SqliteDatasetStorage.from_name("org/data").with_base_dir(tmp_path)
    assert storage.db_file() == tmp_path / "org_data.db"
    assert not storage.exists()
    with storage.writer() as writer:
        writer.write("train", {"a": 1})
    assert storage.exists() and storage.splits() == ["train"]
    assert storage.reader("train").get(0) == {"a": 1}
    by_file = SqliteDatasetStorage.from_file(storage.db_file())
    assert by_file.reader("train").get(0) == {"a": 1}
    with pytest.raises(ValueError, match="only applies to storages created with from_name"):
        by_file.with_base_dir(tmp_path)
    with pytest.raises(ValueError, match="exactly one of"):
        SqliteDatasetStorage()
    with pytest.raises(FileNotFoundError):
        SqliteDatasetStorage.from_file(tmp_path / "none.db").splits()


def test_default_cache_dir_env(tmp_path, monkeypatch):
    monkeypatch.setenv("BURN_DATASET_CACHE_DIR", str(tmp_path / "cache"))
    assert SqliteDatasetStorage.from_name("x").db_file() == tmp_path / "cache" / "x.db"


def test_foreign_database_is_read_by_columns(tmp_path):
    path = tmp_path / "foreign.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE train (row_id INTEGER PRIMARY KEY, title TEXT, label INTEGER)")
    conn.executemany("INSERT INTO train VALUES (?, ?, ?)", [(1, "a", 0), (2, "b", 1)])
    conn.execute("CREATE TABLE other (id INTEGER)")
    conn.commit()
    conn.close()
    assert list(SqliteDataset(path, "train")) == [
        {"title": "a", "label": 0},
        {"title": "b", "label": 1},
    ]
    with pytest.raises(ValueError, match="has no 'row_id' column"):
        SqliteDataset(path, "other")


def test_pickle_reopens_connection(tmp_path):
    path = tmp_path / "p.db"
    with SqliteDatasetWriter(path) as writer:
        writer.write_many("train", ["a", "b"])
    ds = SqliteDataset(path, "train")
    clone = pickle.loads(pickle.dumps(ds))
    assert list(clone) == ["a", "b"]
    ds.close()
    assert ds.get(1) == "b"  # reopens after close


def test_threaded_writer_and_concurrent_thread_readers(tmp_path):
    path = tmp_path / "t.db"
    with SqliteDatasetWriter(path) as writer:
        threads = [
            threading.Thread(
                target=lambda k=k: [writer.write("train", k * 1000 + i) for i in range(250)]
            )
            for k in range(4)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    ds = SqliteDataset(path, "train")
    assert sorted(ds) == sorted(k * 1000 + i for k in range(4) for i in range(250))
    expected = list(ds)
    results, errors = {}, []

    def read(worker):
        try:
            rng = np.random.default_rng(worker)
            idx = rng.integers(0, len(ds), 300).tolist()
            results[worker] = (idx, [ds.get(i) for i in idx])
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    readers = [threading.Thread(target=read, args=(w,)) for w in range(8)]
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    assert errors == []
    for idx, got in results.values():
        assert got == [expected[i] for i in idx]


def _open_fds_to(path):
    fd_dir = "/proc/self/fd"
    targets = []
    for fd in os.listdir(fd_dir):
        try:
            targets.append(os.readlink(f"{fd_dir}/{fd}"))
        except OSError:
            continue
    return sum(t == str(path.resolve()) for t in targets)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts fds through /proc")
def test_loader_epochs_do_not_leak_connections(tmp_path):
    # Every epoch of a multi-worker loader runs on fresh threads, each opening its own
    # connection: those of exited threads must be closed, not kept until the dataset dies.
    path = tmp_path / "e.db"
    with SqliteDatasetWriter(path) as writer:
        writer.write_many("train", list(range(64)))
    ds = SqliteDataset(path, "train")
    loader = DataLoaderBuilder(lambda items, device: items).batch_size(8).num_workers(4).build(ds)
    for _ in range(20):
        assert sorted(x for batch in loader for x in batch) == list(range(64))
    assert _open_fds_to(path) <= 4 + 1  # live worker threads' + the opening thread's


_WRITE = textwrap.dedent(
    """
    import sys, numpy as np
    from burn_dataset import SqliteDatasetWriter
    with SqliteDatasetWriter(sys.argv[1]) as w:
        for i in range(100):
            w.write("train", {"x": np.full(3, i, dtype=np.int32), "label": i % 10})
    """
)
_READ = textwrap.dedent(
    """
    import sys
    from burn_dataset import SqliteDataset
    ds = SqliteDataset(sys.argv[1], "train")
    total = sum(int(item["x"].sum()) + item["label"] for item in ds)
    print(len(ds), total)
    """
)


def test_survives_process_restart_and_concurrent_process_readers(tmp_path):
    path = str(tmp_path / "proc.db")
    subprocess.run([sys.executable, "-c", _WRITE, path], check=True, timeout=60)
    expected = f"100 {sum(3 * i + i % 10 for i in range(100))}"
    readers = [
        subprocess.Popen([sys.executable, "-c", _READ, path], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    ds = SqliteDataset(path, "train")  # this process reads at the same time
    assert ds.get(99)["label"] == 9
    outputs = [p.communicate(timeout=60)[0].strip() for p in readers]
    assert [p.returncode for p in readers] == [0, 0, 0]
    assert outputs == [expected] * 3
