"""The Dataset protocol: get/len/iteration/indexing and argument checks."""

import pytest
from burn_dataset import Dataset, DatasetIterator, InMemDataset
from burn_dataset._base import check_dataset, check_index, fetch_many


class Squares(Dataset[int]):
    def get(self, index):
        index = check_index(index)
        return index * index if index < 4 else None

    def __len__(self):
        return 4


class BurnStyle(Dataset[str]):
    """Implements Burn's `len()` instead of `__len__`."""

    def get(self, index):
        return "ab"[index] if index < 2 else None

    def len(self):
        return 2


class NoLen(Dataset[int]):
    def get(self, index):
        return None


def test_get_returns_item_or_none_past_end():
    ds = Squares()
    assert [ds.get(i) for i in range(5)] == [0, 1, 4, 9, None]
    assert ds.len() == len(ds) == 4
    assert not ds.is_empty()


def test_iteration_and_iter_follow_index_order():
    assert list(Squares()) == [0, 1, 4, 9]
    assert list(Squares().iter()) == [0, 1, 4, 9]
    it = DatasetIterator(Squares())
    assert iter(it) is it
    assert next(it) == 0


def test_len_or_dunder_len_are_interchangeable():
    ds = BurnStyle()
    assert len(ds) == 2 and ds.len() == 2
    assert list(ds) == ["a", "b"]


def test_missing_len_is_a_clear_error():
    with pytest.raises(NotImplementedError, match="NoLen must implement __len__ or len"):
        len(NoLen())
    with pytest.raises(NotImplementedError, match="must implement __len__ or len"):
        NoLen().len()


def test_base_get_is_abstract():
    class Empty(Dataset[int]):
        def __len__(self):
            return 0

    with pytest.raises(NotImplementedError, match="Empty must implement get"):
        Empty().get(0)


def test_getitem_supports_negative_and_slices():
    ds = Squares()
    assert ds[0] == 0 and ds[3] == 9 and ds[-1] == 9 and ds[-4] == 0
    assert ds[1:3] == [1, 4]
    assert ds[::-2] == [9, 1]
    with pytest.raises(IndexError, match="index 4 out of range for dataset of length 4"):
        ds[4]
    with pytest.raises(IndexError, match="index -5 out of range"):
        ds[-5]
    with pytest.raises(TypeError, match="must be int or slice, got str"):
        ds["a"]
    with pytest.raises(TypeError, match="got bool"):
        ds[True]


@pytest.mark.parametrize(
    ("index", "error", "message"),
    [
        (-1, IndexError, r"must be >= 0, got -1; use dataset\[-1\]"),
        (1.0, TypeError, "must be an int, got float"),
        ("0", TypeError, "must be an int, got str"),
        (True, TypeError, "must be an int, got bool"),
    ],
)
def test_get_rejects_bad_indices(index, error, message):
    with pytest.raises(error, match=message):
        InMemDataset([1, 2]).get(index)


def test_get_many_and_fetch_many():
    ds = Squares()
    assert ds.get_many([3, 0, 3]) == [9, 0, 9]
    with pytest.raises(IndexError, match="index 7 out of range for dataset of length 4"):
        ds.get_many([7])

    class DuckTyped:  # only get/len: fetch_many falls back to get
        def get(self, i):
            return i + 10 if i < 3 else None

        def __len__(self):
            return 3

    assert fetch_many(DuckTyped(), [2, 0]) == [12, 10]


def test_windows_method():
    assert list(InMemDataset([1, 2, 3]).windows(2)) == [[1, 2], [2, 3]]


def test_check_dataset_messages():
    with pytest.raises(TypeError, match="wrap a list in InMemDataset"):
        check_dataset([1, 2])
    with pytest.raises(TypeError, match="must be a Dataset .* got dict"):
        check_dataset({"get": 1})
    assert check_dataset(Squares()) is not None


def test_repr_mentions_length():
    assert repr(Squares()) == "Squares(len=4)"
