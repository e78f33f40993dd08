"""Every lazy transform against hand-computed expectations."""

import numpy as np
import pytest
from burn_dataset import (
    ComposedDataset,
    InMemDataset,
    MapperDataset,
    PartialDataset,
    SamplerDataset,
    SelectionDataset,
    ShuffledDataset,
    WindowsDataset,
)


class CountingDataset(InMemDataset):
    """Records which indices were fetched, to prove transforms are lazy."""

    def __init__(self, items):
        super().__init__(items)
        self.fetched = []

    def get(self, index):
        self.fetched.append(index)
        return super().get(index)


def ten():
    return InMemDataset(list(range(10)))


# -- ShuffledDataset -----------------------------------------------------------------------------


def test_shuffled_is_the_seeded_permutation():
    ds = ShuffledDataset.with_seed(ten(), 42)
    expected = np.random.default_rng(42).permutation(10).tolist()
    assert list(ds) == expected
    assert sorted(ds) == list(range(10)) and list(ds) != list(range(10))
    assert ds.indices.tolist() == expected
    assert list(ShuffledDataset.with_seed(ten(), 42)) == expected  # reproducible
    assert list(ShuffledDataset.with_seed(ten(), 7)) != expected
    assert ds.get(10) is None
    assert ds.get_many([0, 9]) == [expected[0], expected[9]]


def test_shuffled_with_shared_generator_advances_it():
    rng = np.random.default_rng(0)
    a, b = ShuffledDataset(ten(), rng), ShuffledDataset.new(ten(), rng)
    ref = np.random.default_rng(0)
    assert list(a) == ref.permutation(10).tolist()
    assert list(b) == ref.permutation(10).tolist()


def test_shuffled_is_lazy_and_validates():
    src = CountingDataset(range(5))
    ds = ShuffledDataset.with_seed(src, 1)
    assert src.fetched == []
    ds.get(0)
    assert src.fetched == [ds.indices[0]]
    with pytest.raises(TypeError, match="seed must be an int or a numpy Generator, got str"):
        ShuffledDataset.with_seed(ten(), "42")
    with pytest.raises(ValueError, match="seed must be >= 0"):
        ShuffledDataset.with_seed(ten(), -1)


# -- SamplerDataset ------------------------------------------------------------------------------


def test_sampler_with_replacement_follows_seeded_draws():
    ds = SamplerDataset(InMemDataset(["a", "b", "c"]), 8, seed=3)
    rng = np.random.default_rng(3)
    expected = ["abc"[int(rng.integers(3))] for _ in range(8)]
    assert len(ds) == 8
    assert list(ds) == expected
    assert ds.get(8) is None
    assert ds.replacement is True


def test_sampler_draws_fresh_items_each_epoch():
    ds = SamplerDataset.with_replacement(ten(), 50, seed=0)
    first, second = list(ds), list(ds)
    assert len(first) == len(second) == 50
    assert first != second  # new draws each pass, as in Burn
    assert set(first) <= set(range(10))


def test_sampler_without_replacement_cycles_through_permutations():
    ds = SamplerDataset.without_replacement(InMemDataset(["a", "b", "c"]), 7, seed=5)
    draws = list(ds)
    rng = np.random.default_rng(5)
    p1, p2, p3 = (rng.permutation(3).tolist() for _ in range(3))
    assert draws == ["abc"[i] for i in p1 + p2 + p3[:1]]
    assert sorted(draws[:3]) == sorted(draws[3:6]) == ["a", "b", "c"]


def test_sampler_size_larger_and_smaller_than_source():
    assert len(SamplerDataset.new(ten(), 3, seed=1)) == 3
    assert len(SamplerDataset(ten(), 100, replacement=False, seed=1)) == 100
    assert list(SamplerDataset(InMemDataset([]), 0)) == []


def test_sampler_errors():
    with pytest.raises(ValueError, match="cannot sample from an empty dataset"):
        SamplerDataset(InMemDataset([]), 3)
    with pytest.raises(ValueError, match="size must be >= 0, got -1"):
        SamplerDataset(ten(), -1)
    with pytest.raises(TypeError, match="size must be an int, got float"):
        SamplerDataset(ten(), 2.5)
    with pytest.raises(TypeError, match="replacement must be a bool"):
        SamplerDataset(ten(), 2, replacement="no")


# -- PartialDataset ------------------------------------------------------------------------------


def test_partial_80_20_split_like_the_book():
    ds = ten()
    n = len(ds)
    train, test = PartialDataset.new(ds, 0, n * 8 // 10), PartialDataset(ds, n * 8 // 10, n)
    assert list(train) == [0, 1, 2, 3, 4, 5, 6, 7]
    assert list(test) == [8, 9]
    assert (test.start, test.end, len(test)) == (8, 10, 2)
    assert test.get(2) is None
    assert test.get_many([1, 0]) == [9, 8]
    with pytest.raises(IndexError, match="index 2 out of range for dataset of length 2"):
        test.get_many([2])


def test_partial_split_and_split_chunks():
    assert [list(p) for p in PartialDataset.split(InMemDataset(range(7)), 3)] == [
        [0, 1],
        [2, 3],
        [4, 5, 6],
    ]
    # 10 items, batch 3 -> 4 batches; 3 parts get 2, 1, 1 batches -> [0,6), [6,9), [9,10)
    parts = PartialDataset.split_chunks(ten(), 3, 3)
    assert [(p.start, p.end) for p in parts] == [(0, 6), (6, 9), (9, 10)]
    # more parts than batches: trailing parts are empty
    parts = PartialDataset.split_chunks(InMemDataset(range(4)), 3, 4)
    assert [len(p) for p in parts] == [4, 0, 0]


@pytest.mark.parametrize(("start", "end"), [(-1, 3), (3, 2), (0, 11)])
def test_partial_rejects_bad_ranges(start, end):
    with pytest.raises(ValueError, match=r"0 <= start <= end <= len\(dataset\) = 10"):
        PartialDataset(ten(), start, end)


def test_partial_split_errors():
    with pytest.raises(ValueError, match="num must be >= 1"):
        PartialDataset.split(ten(), 0)
    with pytest.raises(ValueError, match="num and batch_size must be >= 1"):
        PartialDataset.split_chunks(ten(), 2, 0)
    with pytest.raises(TypeError, match="start must be an int, got float"):
        PartialDataset(ten(), 0.0, 1)


# -- MapperDataset -------------------------------------------------------------------------------


def test_mapper_with_callable_and_mapper_object():
    class Normalize:
        def map(self, item):
            return (item - 5) / 5

    assert list(MapperDataset(ten(), lambda x: x * x))[:4] == [0, 1, 4, 9]
    ds = MapperDataset.new(ten(), Normalize())
    assert ds.get(0) == -1.0 and ds.get(10) is None and len(ds) == 10
    assert ds.get_many([9, 5]) == [0.8, 0.0]


def test_mapper_is_lazy_and_validates():
    src = CountingDataset(range(3))
    calls = []
    ds = MapperDataset(src, lambda x: calls.append(x) or x)
    assert calls == [] and src.fetched == []
    ds.get(2)
    assert calls == [2]
    with pytest.raises(TypeError, match="mapper must be a callable or have a map"):
        MapperDataset(ten(), 3)


# -- ComposedDataset -----------------------------------------------------------------------------


def test_composed_concatenates_in_order():
    ds = ComposedDataset.new([InMemDataset([1, 2]), InMemDataset([]), InMemDataset([3, 4, 5])])
    assert len(ds) == 5
    assert [ds.get(i) for i in range(6)] == [1, 2, 3, 4, 5, None]
    assert len(ComposedDataset([])) == 0 and ComposedDataset([]).get(0) is None


def test_composed_errors():
    with pytest.raises(TypeError, match="expects a list of datasets, got InMemDataset"):
        ComposedDataset(ten())
    with pytest.raises(TypeError, match=r"datasets\[1\] must be a Dataset"):
        ComposedDataset([ten(), [1, 2]])


# -- WindowsDataset ------------------------------------------------------------------------------


def test_windows():
    ds = WindowsDataset.new(InMemDataset([1, 2, 3, 4]), 3)
    assert len(ds) == 2 and ds.size == 3
    assert list(ds) == [[1, 2, 3], [2, 3, 4]]
    assert ds.get(2) is None
    assert list(WindowsDataset(InMemDataset([1, 2, 3]), 1)) == [[1], [2], [3]]
    assert len(WindowsDataset(InMemDataset([1, 2]), 5)) == 0


def test_windows_errors():
    with pytest.raises(ValueError, match="window size must be >= 1, got 0"):
        WindowsDataset(ten(), 0)
    with pytest.raises(TypeError, match="window size must be an int, got str"):
        WindowsDataset(ten(), "2")


# -- SelectionDataset ----------------------------------------------------------------------------


def test_selection_indices_slice_split():
    src = InMemDataset(list("abcde"))
    sel = SelectionDataset.from_indices_checked(src, [4, 0, 0, 2])
    assert list(sel) == ["e", "a", "a", "c"] and sel.indices == [4, 0, 0, 2]
    assert sel.get(4) is None
    assert sel.get_many([3, 0]) == ["c", "e"]
    assert list(sel.slice(1, 3)) == ["a", "a"]
    all_ = SelectionDataset.new_select_all(src)
    assert [list(p) for p in all_.split(2)] == [["a", "b"], ["c", "d", "e"]]
    assert list(SelectionDataset(src, np.array([1, 3]))) == ["b", "d"]


def test_selection_shuffle_is_seeded():
    src = InMemDataset(list("abcde"))
    shuffled = SelectionDataset.new_shuffled(src, 3)
    perm = np.random.default_rng(3).permutation(5).tolist()
    assert shuffled.indices == perm
    sel = SelectionDataset.new_select_all(src)
    assert sel.shuffle(3) is sel and sel.indices == perm


def test_selection_checked_vs_unchecked():
    src = InMemDataset([1, 2])
    with pytest.raises(IndexError, match=r"must be in \[0, 2\), got out-of-range \[5, -1\]"):
        SelectionDataset.from_indices_checked(src, [0, 5, -1])
    unchecked = SelectionDataset.from_indices_unchecked(src, [1, 7])
    assert unchecked.get(0) == 2 and unchecked.get(1) is None
    with pytest.raises(ValueError, match="slice needs 0 <= start <= end <= 2"):
        unchecked.slice(1, 3)
    with pytest.raises(ValueError, match="num must be an int >= 1"):
        unchecked.split(0)
    with pytest.raises(TypeError, match="indices must be an iterable of ints"):
        SelectionDataset(src, ["a"])


def test_transforms_compose():
    # shuffle -> 80/20 split -> map, all lazy views over the same source
    src = CountingDataset(range(10))
    shuffled = ShuffledDataset.with_seed(src, 0)
    valid = MapperDataset(PartialDataset(shuffled, 8, 10), lambda x: -x)
    assert src.fetched == []
    perm = np.random.default_rng(0).permutation(10).tolist()
    assert list(valid) == [-perm[8], -perm[9]]
    assert sorted(src.fetched) == sorted(perm[8:])
