"""InMemDataset: construction, JSON-lines and CSV loading with typed items."""

import dataclasses
from typing import Optional

import pytest
from burn_dataset import InMemDataset


@dataclasses.dataclass
class Patient:
    age: int
    bmi: float
    smoker: bool
    name: str
    note: Optional[str] = None  # noqa: UP045 - exercise typing.Optional too


def test_new_get_len():
    ds = InMemDataset.new([{"x": 1}, {"x": 2}])
    assert len(ds) == 2
    assert ds.get(0) == {"x": 1}
    assert ds.get(1) == {"x": 2}
    assert ds.get(2) is None
    assert ds.get_many([1, 1]) == [{"x": 2}, {"x": 2}]
    with pytest.raises(IndexError, match="index 2 out of range for dataset of length 2"):
        ds.get_many([2])


def test_get_many_bulk_path_still_checks_every_index():
    import numpy as np

    ds = InMemDataset(list(range(10)))
    assert ds.get_many([9, 0, 9, 3]) == [9, 0, 9, 3]
    assert ds.get_many(np.array([2, 1])) == [2, 1]
    assert ds.get_many([np.int64(4), 5]) == [4, 5]
    assert ds.get_many([]) == []
    with pytest.raises(IndexError, match="index 10 out of range for dataset of length 10"):
        ds.get_many([0, 10])
    with pytest.raises(IndexError, match="must be >= 0, got -1"):
        ds.get_many([3, -1])
    with pytest.raises(TypeError, match="got bool"):
        ds.get_many([1, True])
    with pytest.raises(TypeError, match="got float"):
        ds.get_many([1, 2.0])


def test_rejects_non_iterables_of_items():
    with pytest.raises(TypeError, match="iterable of items .* got str"):
        InMemDataset("abc")
    with pytest.raises(TypeError, match="got dict"):
        InMemDataset({"a": 1})


def test_from_dataset_materializes():
    src = InMemDataset(range(3))
    assert list(InMemDataset.from_dataset(src)) == [0, 1, 2]
    with pytest.raises(TypeError, match="must be a Dataset"):
        InMemDataset.from_dataset(42)


def test_from_json_rows(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(
        '{"age": 59, "bmi": 32.1, "smoker": true, "name": "a"}\n\n'
        '{"age": 48, "bmi": 21.6, "smoker": false, "name": "b", "note": "x"}\n'
    )
    raw = InMemDataset.from_json_rows(path)
    assert raw.get(1)["note"] == "x"
    typed = InMemDataset.from_json_rows(path, Patient)
    assert typed.get(0) == Patient(59, 32.1, True, "a")
    assert typed.get(1) == Patient(48, 21.6, False, "b", "x")


def test_from_json_rows_errors_name_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"a": 1}\n{oops}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2: invalid JSON"):
        InMemDataset.from_json_rows(path)
    path.write_text("[1, 2]\n")
    with pytest.raises(
        ValueError, match=r":1: expected a JSON object for item_type Patient, got list"
    ):
        InMemDataset.from_json_rows(path, Patient)
    path.write_text('{"age": 1}\n')
    with pytest.raises(ValueError, match=r"missing field\(s\) \['bmi', 'name', 'smoker'\]"):
        InMemDataset.from_json_rows(path, Patient)


def test_from_csv_dict_rows_and_typed_rows(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("age,bmi,smoker,name,note\n59,32.1,yes,ann,\n48,21.6,0,bob,hi\n")
    rows = InMemDataset.from_csv(path)
    assert rows.get(0) == {"age": "59", "bmi": "32.1", "smoker": "yes", "name": "ann", "note": ""}
    typed = InMemDataset.from_csv(path, Patient)
    assert list(typed) == [
        Patient(59, 32.1, True, "ann", None),
        Patient(48, 21.6, False, "bob", "hi"),
    ]


def test_from_csv_tsv_and_headerless(tmp_path):
    path = tmp_path / "p.tsv"
    path.write_text("3.0\t1.5\tfalse\tx\tn\n")
    ds = InMemDataset.from_csv(path, Patient, delimiter="\t", has_header=False)
    assert ds.get(0) == Patient(3, 1.5, False, "x", "n")
    ds = InMemDataset.from_csv(path, delimiter="\t", has_header=False, fieldnames="abcde")
    assert ds.get(0)["a"] == "3.0"


def test_from_csv_errors(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("age,bmi,smoker,name,note\n1,2\n")
    with pytest.raises(
        ValueError, match=r"p.csv:2: expected 5 fields \(age, bmi, smoker, name, note\), got 2"
    ):
        InMemDataset.from_csv(path)
    path.write_text("age,bmi,smoker,name,note\n1.5,2,1,a,b\n")
    with pytest.raises(ValueError, match=r"field 'age': cannot convert '1.5' to int"):
        InMemDataset.from_csv(path, Patient)
    path.write_text("age,bmi,smoker,name,note\n1,2,maybe,a,b\n")
    with pytest.raises(ValueError, match=r"field 'smoker': cannot convert 'maybe' to bool"):
        InMemDataset.from_csv(path, Patient)
    path.write_text("age,bmi,smoker,name,note,extra\n1,2,1,a,b,c\n")
    with pytest.raises(ValueError, match=r"column\(s\) \['extra'\] that Patient does not declare"):
        InMemDataset.from_csv(path, Patient)
    with pytest.raises(ValueError, match="needs fieldnames"):
        InMemDataset.from_csv(path, has_header=False)
    with pytest.raises(ValueError, match="single character"):
        InMemDataset.from_csv(path, delimiter="::")
    with pytest.raises(TypeError, match="item_type must be None, a dataclass or a callable"):
        InMemDataset.from_csv(path, item_type=3)


def test_from_csv_empty_file_and_callable_item_type(tmp_path):
    path = tmp_path / "e.csv"
    path.write_text("")
    assert len(InMemDataset.from_csv(path)) == 0
    path.write_text("a,b\n1,2\n")
    ds = InMemDataset.from_csv(path, item_type=lambda a, b: int(a) + int(b))
    assert ds.get(0) == 3
