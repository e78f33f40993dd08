"""Records read their fields as attributes, as Burn's derived `ModelRecord` structs do.

The book writes `Conv2dConfig::new([1, 8], [3, 3]).init_with(record.conv1)`; a record is still a
dict (`record["conv1"]`) and serialises exactly as a plain dict does.
"""

from __future__ import annotations

import copy

import pytest

import burn_record as br


def _walk_dicts(item, path=""):
    if isinstance(item, dict):
        yield path, item
        for k, v in item.items():
            yield from _walk_dicts(v, f"{path}.{k}")
    elif isinstance(item, list | tuple):
        for i, v in enumerate(item):
            yield from _walk_dicts(v, f"{path}.{i}")


def test_fields_read_as_attributes_nested_and_in_lists():
    w = br.ParamRecord("w", br.TensorData([[1.0, 2.0]]))
    r = br.Record({"conv1": {"weight": w, "bias": None}, "layers": [{"gamma": 1}, None]})
    assert r.conv1.weight is w and r.conv1.bias is None
    assert r.layers[0].gamma == 1 and r.layers[1] is None
    assert r["conv1"]["weight"] is w  # keys still work
    assert r == {"conv1": {"weight": w, "bias": None}, "layers": [{"gamma": 1}, None]}
    assert isinstance(r, dict) and type(r.conv1) is br.Record and type(r.layers[0]) is br.Record


def test_a_typo_names_the_fields_there_are():
    r = br.Record({"conv1": {"weight": 1, "bias": 2}, "linear1": {}})
    with pytest.raises(AttributeError) as err:
        _ = r.conv3
    assert str(err.value) == (
        "record has no field 'conv3' (did you mean 'conv1'?); fields: conv1, linear1"
    )
    with pytest.raises(AttributeError, match=r"no field 'wieght' \(did you mean 'weight'\?\); "):
        _ = r.conv1.wieght
    with pytest.raises(AttributeError, match="no field 'x'; fields: none"):
        _ = r.linear1.x
    assert not hasattr(r, "conv3") and hasattr(r, "conv1")


def test_dict_methods_win_over_fields_of_the_same_name():
    r = br.Record({"items": 1, "value": 2})
    assert r["items"] == 1 and callable(r.items)  # documented: use the key for such names
    assert r.value == 2  # `value` is no dict method (attention's `value` field reads fine)


def test_setting_and_deleting_fields():
    r = br.Record()
    r.linear = {"weight": 3}
    assert r == {"linear": {"weight": 3}} and r.linear.weight == 3
    del r.linear
    assert r == {}
    with pytest.raises(AttributeError, match="no field 'linear'"):
        del r.linear


def test_copies_keep_the_type_and_values():
    r = br.Record({"a": {"b": [1, {"c": 2}]}})
    for c in (copy.copy(r), copy.deepcopy(r)):
        assert type(c) is br.Record and c == r and c.a.b[1].c == 2
    assert copy.deepcopy(r).a is not r.a


def test_every_recorder_loads_records_with_attribute_access(recorder_cls, item, tmp_path):
    rec = recorder_cls()
    loaded = rec.load(
        rec.record(item, tmp_path / "m") if hasattr(rec, "file_path") else rec.record(item)
    )
    for path, d in _walk_dicts(loaded):
        assert type(d) is br.Record, path
    assert loaded.layers[1].weight.id == "w1"
    assert loaded.norm.gamma.id == "g" and loaded.norm.beta is None
    assert loaded.constants.step == 7
    # apply_dtypes (loading into a module's dtypes) keeps them Records too.
    converted = br.apply_dtypes(loaded, item)
    assert type(converted.norm) is br.Record and converted.norm.gamma.dtype is br.DType.F16


def test_serialisation_is_unchanged(recorder_cls, item):
    # A Record and the plain dict with the same contents encode to the very same bytes.
    rec = recorder_cls()
    assert rec.to_bytes(br.Record(item)) == rec.to_bytes(item)
    assert rec.to_bytes(rec.from_bytes(rec.to_bytes(item))) == rec.to_bytes(item)
