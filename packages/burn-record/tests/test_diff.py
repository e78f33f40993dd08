"""record_diff / check_record / RecordMismatchError / apply_dtypes: what nn uses on load."""

from __future__ import annotations

import numpy as np
import pytest

import burn_record as br


def _p(pid, *shape, dtype=np.float32):
    return br.ParamRecord(pid, br.TensorData(np.zeros(shape, dtype)))


def _module_record():
    return {
        "layers": [
            {"weight": _p("a", 2, 3), "bias": _p("b", 3)},
            {"weight": _p("c", 3, 4), "bias": _p("d", 4)},
        ],
        "norm": {"gamma": _p("e", 4), "beta": _p("f", 4)},
        "dropout_prob": 0.1,
    }


def test_identical_records_have_no_diff():
    diff = br.record_diff(_module_record(), _module_record())
    assert not diff
    assert diff == br.RecordDiff([], [], [])
    assert br.check_record(_module_record(), _module_record()) == diff


def test_every_missing_unexpected_and_misshaped_path_is_listed():
    loaded = _module_record()
    del loaded["layers"][1]["bias"]
    del loaded["norm"]
    loaded["layers"][0]["weight"] = _p("a", 3, 2)
    loaded["layers"][1]["weight"] = 5  # a scalar where a tensor should be
    loaded["head"] = {"weight": _p("z", 4, 10)}
    loaded["layers"].append({"weight": _p("y", 1)})
    missing, unexpected, mis_shaped = br.record_diff(_module_record(), loaded)
    assert missing == ["layers.1.bias", "norm.gamma", "norm.beta"]
    assert unexpected == ["layers.2.weight", "head.weight"]
    assert mis_shaped == [("layers.0.weight", (2, 3), (3, 2)), ("layers.1.weight", (3, 4), None)]

    with pytest.raises(br.RecordMismatchError) as info:
        br.check_record(_module_record(), loaded)
    err = info.value
    message = str(err)
    for path in missing + unexpected + [p for p, _, _ in mis_shaped]:
        assert path in message
    assert "expected [2, 3], got [3, 2]" in message
    assert "expected [3, 4], got a non-tensor value" in message
    assert (err.missing, err.unexpected, err.mis_shaped) == (missing, unexpected, mis_shaped)
    assert isinstance(err, br.RecordError)


def test_check_record_allows_partial_and_unused():
    loaded = _module_record()
    del loaded["norm"]["beta"]
    loaded["extra"] = _p("x", 1)
    diff = br.check_record(_module_record(), loaded, allow_missing=True, allow_unexpected=True)
    assert diff.missing == ["norm.beta"] and diff.unexpected == ["extra"]
    with pytest.raises(br.RecordMismatchError, match="norm.beta"):
        br.check_record(_module_record(), loaded, allow_unexpected=True)
    loaded["norm"]["gamma"] = _p("e", 5)
    with pytest.raises(br.RecordMismatchError, match="norm.gamma"):  # shapes are never optional
        br.check_record(_module_record(), loaded, allow_missing=True, allow_unexpected=True)


def test_diff_after_a_file_round_trip(tmp_path):
    rec = br.BinFileRecorder()
    path = rec.record(_module_record(), tmp_path / "m")
    assert not br.record_diff(_module_record(), rec.load(path))


def test_flatten_paths():
    flat = br.flatten(_module_record())
    assert list(flat)[:2] == ["layers.0.weight", "layers.0.bias"]
    assert flat["dropout_prob"] == 0.1
    assert br.flatten(3) == {"<root>": 3}


def test_reference_may_hold_array_like_tensors():
    # nn may hand its live tensors (anything with .shape and .dtype) as the reference.
    class FakeTensor:
        def __init__(self, shape, dtype):
            self.shape, self.dtype = shape, dtype

    ref = {"w": FakeTensor((2, 3), br.DType.F64)}
    stored = {"w": _p("w", 2, 3)}
    assert not br.record_diff(ref, stored)
    assert br.apply_dtypes(stored, ref)["w"].dtype is br.DType.F64
    assert br.apply_dtypes(stored, {"w": np.zeros((2, 3), np.float16)})["w"].dtype is br.DType.F16


def test_apply_dtypes_keeps_structure_and_refuses_kind_changes():
    stored = {"a": (_p("a", 2, dtype=np.float16), [br.TensorData(np.array([1], np.int16))]), "k": 1}
    ref = {"a": (_p("a", 2, dtype=np.float64), [br.TensorData(np.array([1], np.int32))]), "k": 2.0}
    out = br.apply_dtypes(stored, ref)
    assert isinstance(out["a"], tuple) and isinstance(out["a"][1], list)
    assert out["a"][0].dtype is br.DType.F64 and out["a"][0].id == "a"
    assert out["a"][1][0].dtype is br.DType.I32
    assert out["k"] == 1
    # Missing counterparts leave the stored dtype alone.
    assert br.apply_dtypes(stored, {})["a"][0].dtype is br.DType.F16
    with pytest.raises(br.RecordDTypeError, match="a.0"):
        br.apply_dtypes(stored, {"a": (_p("a", 2, dtype=np.int64),)})
