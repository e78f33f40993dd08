"""DataLoaderBuilder / DataLoader: order, shuffling, workers, errors, progress, slicing."""

import threading
import time

import numpy as np
import pytest
from burn_dataset import (
    DataLoader,
    DataLoaderBuilder,
    InMemDataset,
    Progress,
    SqliteDataset,
    SqliteDatasetWriter,
    split_dataloader,
)


class ListBatcher:
    """Returns the items and the device it was given."""

    def batch(self, items, device):
        return list(items), device


def ten():
    return InMemDataset(list(range(10)))


def flatten(loader):
    return [item for batch, _ in loader for item in batch]


def test_batches_in_order_with_partial_last_batch():
    loader = DataLoaderBuilder(ListBatcher()).batch_size(4).build(ten())
    assert [b for b, _ in loader] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert loader.num_items() == 10 and len(loader) == 3
    assert [b for b, _ in DataLoaderBuilder.new(ListBatcher()).build(InMemDataset([1, 2]))] == [
        [1],
        [2],
    ]


def test_empty_dataset_yields_nothing():
    assert list(DataLoaderBuilder(ListBatcher()).num_workers(2).build(InMemDataset([]))) == []


def test_shuffle_is_deterministic_per_seed_and_changes_each_epoch():
    def epochs(seed, workers):
        loader = (
            DataLoaderBuilder(ListBatcher())
            .batch_size(3)
            .shuffle(seed)
            .num_workers(workers)
            .build(ten())
        )
        return [flatten(loader) for _ in range(3)]

    a = epochs(42, 0)
    assert a == epochs(42, 0) == epochs(42, 2)  # same seed, any worker count -> same order
    assert a[0] != a[1] != a[2]  # reshuffled every epoch
    for epoch in a:
        assert sorted(epoch) == list(range(10))  # every item exactly once
    expected = [np.random.default_rng([42, e]).permutation(10).tolist() for e in range(3)]
    assert a == expected  # the documented order
    assert epochs(7, 0) != a


def test_iter_starts_a_new_epoch():
    loader = DataLoaderBuilder(ListBatcher()).shuffle(1).build(ten())
    assert loader.epoch == 0
    first = loader.iter()
    second = iter(loader)
    assert loader.epoch == 2
    assert [b for b, _ in first] != [b for b, _ in second]


def test_set_epoch_replays_the_order_of_that_epoch():
    def order(loader):
        return [x for b, _ in loader.iter() for x in b]

    full = DataLoaderBuilder(ListBatcher()).batch_size(4).shuffle(3).build(ten())
    seen = [order(full) for _ in range(3)]
    resumed = DataLoaderBuilder(ListBatcher()).batch_size(4).shuffle(3).build(ten())
    resumed.set_epoch(2)
    assert resumed.epoch == 2
    assert order(resumed) == seen[2] and resumed.epoch == 3  # then counts on as before
    resumed.set_epoch(0)
    assert order(resumed) == seen[0]
    assert resumed.to_device("cpu").epoch == 1  # derived loaders keep the counter
    with pytest.raises(ValueError):
        resumed.set_epoch(-1)
    with pytest.raises(TypeError):
        resumed.set_epoch(1.5)


def test_workers_give_same_batches_as_main_thread():
    data = InMemDataset([np.full(3, i) for i in range(103)])

    def stack(items, device):
        return np.stack(items)

    main = [b.copy() for b in DataLoaderBuilder(stack).batch_size(8).build(data)]
    threaded = list(DataLoaderBuilder(stack).batch_size(8).num_workers(3).build(data))
    assert len(main) == len(threaded) == 13
    assert all(np.array_equal(x, y) for x, y in zip(main, threaded, strict=True))
    assert threaded[-1].shape == (7, 3)


def test_workers_run_in_background_threads():
    names = set()

    def batcher(items, device):
        names.add(threading.current_thread().name)
        return items

    list(DataLoaderBuilder(batcher).batch_size(2).num_workers(2).build(ten()))
    assert names and all(n.startswith("burn-dataloader") for n in names)
    names.clear()
    list(DataLoaderBuilder(batcher).batch_size(2).build(ten()))
    assert names == {threading.current_thread().name}


def test_prefetch_is_bounded():
    built = []

    def batcher(items, device):
        built.append(items[0])
        return items

    loader = DataLoaderBuilder(batcher).batch_size(1).num_workers(2).prefetch(3).build(ten())
    it = iter(loader)
    next(it)
    time.sleep(0.2)  # give workers time to run ahead if they were unbounded
    assert len(built) <= 1 + 3
    it.close()


@pytest.mark.parametrize("workers", [0, 2])
def test_worker_exception_is_raised_in_caller(workers):
    def batcher(items, device):
        if 5 in items:
            raise ValueError("bad item 5")
        return items

    loader = DataLoaderBuilder(batcher).batch_size(2).num_workers(workers).build(ten())
    it = iter(loader)
    assert next(it) == [0, 1] and next(it) == [2, 3]
    with pytest.raises(ValueError, match="bad item 5") as info:
        next(it)
    assert any("building batch 2" in note for note in info.value.__notes__)
    with pytest.raises(StopIteration):  # the epoch is over, no hang
        next(it)
    with pytest.raises(ValueError, match="bad item 5"):  # a new epoch hits it again
        list(loader)


def test_dataset_error_in_worker_propagates():
    class Broken(InMemDataset):
        def get(self, index):
            if index == 3:
                raise KeyError("corrupt row")
            return super().get(index)

        def get_many(self, indices):
            return [self.get(i) for i in indices]

    loader = DataLoaderBuilder(ListBatcher()).batch_size(2).num_workers(2).build(Broken(range(6)))
    with pytest.raises(KeyError, match="corrupt row"):
        list(loader)


def test_progress_counts_items():
    loader = DataLoaderBuilder(ListBatcher()).batch_size(4).num_workers(1).build(ten())
    it = iter(loader)
    assert it.progress() == Progress(0, 10)
    seen = []
    for _ in it:
        seen.append((it.progress().items_processed, it.progress().items_total))
    assert seen == [(4, 10), (8, 10), (10, 10)]


def test_device_slice_and_split():
    loader = DataLoaderBuilder(ListBatcher()).batch_size(4).set_device("cpu").build(ten())
    assert {d for _, d in loader} == {"cpu"}
    moved = loader.to_device("gpu:1")
    assert moved.device == "gpu:1" and {d for _, d in moved} == {"gpu:1"}
    assert [b for b, _ in loader.slice(2, 7)] == [[2, 3, 4, 5], [6]]
    parts = loader.split(["a", "b", "c"])
    assert [flatten(p) for p in parts] == [[0, 1, 2], [3, 4, 5], [6, 7, 8, 9]]
    assert [p.device for p in parts] == ["a", "b", "c"]
    assert [p.num_items() for p in split_dataloader(loader, ["x"])] == [10]
    with pytest.raises(ValueError, match="at least one device"):
        loader.split([])
    with pytest.raises(TypeError, match="devices must be a list of devices, got str"):
        loader.split("cpu")


def test_shuffled_slices_stay_within_their_range():
    loader = DataLoaderBuilder(ListBatcher()).batch_size(2).shuffle(3).build(ten())
    a, b = loader.split([0, 1])
    assert sorted(flatten(a)) == [0, 1, 2, 3, 4] and sorted(flatten(b)) == [5, 6, 7, 8, 9]


def test_batcher_forms():
    class BookBatcher:  # the Burn Book's batcher holds its device: batch(items) only
        def batch(self, items):
            return sum(items)

    assert list(DataLoaderBuilder(BookBatcher()).batch_size(5).build(ten())) == [10, 35]
    assert list(DataLoader(lambda items, device: len(items), ten(), 6)) == [6, 4]
    assert list(DataLoader(lambda *args: args[1], ten(), 10, device="d")) == ["d"]
    with pytest.raises(TypeError, match="batcher must have a batch"):
        DataLoaderBuilder(3)


@pytest.mark.parametrize(
    ("method", "value", "error", "message"),
    [
        ("batch_size", 0, ValueError, "batch_size must be >= 1, got 0"),
        ("batch_size", 2.0, TypeError, "batch_size must be an int, got float"),
        ("shuffle", -3, ValueError, "shuffle seed must be >= 0"),
        ("num_workers", -1, ValueError, "num_workers must be >= 0"),
        ("num_workers", True, TypeError, "num_workers must be an int, got bool"),
        ("prefetch", 0, ValueError, "prefetch must be >= 1"),
    ],
)
def test_builder_rejects_bad_options(method, value, error, message):
    with pytest.raises(error, match=message):
        getattr(DataLoaderBuilder(ListBatcher()), method)(value)


def test_build_rejects_non_datasets():
    with pytest.raises(TypeError, match="wrap a list in InMemDataset"):
        DataLoaderBuilder(ListBatcher()).build([1, 2, 3])


def test_sqlite_dataset_through_threaded_loader(tmp_path):
    path = tmp_path / "d.db"
    with SqliteDatasetWriter(path) as writer:
        writer.write_many("train", ({"x": np.full(2, i), "y": i} for i in range(50)))
    ds = SqliteDataset(path, "train")

    def batcher(items, device):
        return np.stack([it["x"] for it in items]), [it["y"] for it in items]

    loader = DataLoaderBuilder(batcher).batch_size(8).shuffle(0).num_workers(4).build(ds)
    ys = [y for _, batch_y in loader for y in batch_y]
    assert ys == np.random.default_rng([0, 0]).permutation(50).tolist()


def test_early_break_closes_workers():
    loader = DataLoaderBuilder(ListBatcher()).batch_size(1).num_workers(2).build(ten())
    it = iter(loader)
    assert next(it) == ([0], None)
    it.close()
    with pytest.raises(StopIteration):  # a closed iterator has finished its epoch
        next(it)
    deadline = time.monotonic() + 5
    while any(t.name.startswith("burn-dataloader") for t in threading.enumerate()):
        assert time.monotonic() < deadline, "worker threads still alive after close()"
        time.sleep(0.01)
