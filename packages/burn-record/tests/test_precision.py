"""Precision settings: the casts applied on save, and the module's dtypes applied on load."""

from __future__ import annotations

import numpy as np
import pytest

import burn_record as br


def test_settings_table():
    # The Burn Book's table: Double f64/i64, Full f32/i32, Half f16/i16.
    table = {
        br.DoublePrecisionSettings: (br.DType.F64, br.DType.I64, "f64", "i64"),
        br.FullPrecisionSettings: (br.DType.F32, br.DType.I32, "f32", "i32"),
        br.HalfPrecisionSettings: (br.DType.F16, br.DType.I16, "f16", "i16"),
    }
    for cls, (f, i, fname, iname) in table.items():
        s = cls()
        assert (s.float_dtype, s.int_dtype, s.float_name, s.int_name) == (f, i, fname, iname)


def test_half_precision_matches_numpy_float16_rounding():
    rng = np.random.default_rng(0)
    values = np.concatenate(
        [
            rng.standard_normal(1000) * 10.0 ** rng.integers(-8, 5, 1000),
            [65504.0, 65519.99, 65520.0, 1e6, -1e6, 6e-8, 2.9e-8, 3.0e-8, 0.1, 1 / 3, np.nan],
        ]
    )
    for src in (np.float32, np.float64):
        data = br.TensorData(values.astype(src))
        rec = br.NamedMpkBytesRecorder(br.HalfPrecisionSettings)
        loaded = rec.load(rec.record({"x": data}))["x"]
        assert loaded.dtype is br.DType.F16
        with np.errstate(over="ignore"):
            want = values.astype(src).astype(np.float16)
        np.testing.assert_array_equal(loaded.array, want)  # bit-for-bit, NaN == NaN, inf == inf
    assert np.isinf(loaded.array[values == 1e6]).all()


def test_int_casts_and_overflow_is_refused():
    ints = br.TensorData(np.array([-(2**15), 2**15 - 1], dtype=np.int64))
    rec = br.BinBytesRecorder(br.HalfPrecisionSettings)
    out = rec.load(rec.record(ints))
    assert out.dtype is br.DType.I16 and out.to_vec() == [-(2**15), 2**15 - 1]
    too_big = {"state": {"count": br.TensorData(np.array([0, 2**15], dtype=np.int64))}}
    for cls in (br.BinBytesRecorder, br.NamedMpkBytesRecorder):
        with pytest.raises(br.RecordPrecisionError, match=r"state\.count.*int16"):
            cls(br.HalfPrecisionSettings).record(too_big)
    # Widening never fails and keeps the values.
    wide = br.BinBytesRecorder(br.DoublePrecisionSettings).load(
        br.BinBytesRecorder(br.DoublePrecisionSettings).record(too_big)
    )
    assert wide["state"]["count"].dtype is br.DType.I64
    assert wide["state"]["count"].to_vec() == [0, 2**15]


def test_bool_tensors_are_never_converted():
    mask = br.TensorData(np.array([[True, False, True]]))
    for settings in (br.HalfPrecisionSettings, br.DoublePrecisionSettings):
        rec = br.NamedMpkBytesRecorder(settings)
        out = rec.load(rec.record(mask))
        out.assert_eq(mask, strict=True)


def test_metadata_records_the_settings(tmp_path):
    import json

    path = br.PrettyJsonFileRecorder(br.HalfPrecisionSettings).record({}, tmp_path / "m")
    meta = json.loads(path.read_text())["metadata"]
    assert (meta["float"], meta["int"], meta["settings"]) == ("f16", "i16", "HalfPrecisionSettings")


def test_custom_settings_subclass():
    class Mixed(br.PrecisionSettings):
        float_dtype = br.DType.F16
        int_dtype = br.DType.I64

    rec = br.BinBytesRecorder(Mixed)
    out = rec.load(rec.record([br.TensorData([1.5]), br.TensorData(np.array([2**40]))]))
    assert [t.dtype for t in out] == [br.DType.F16, br.DType.I64]


def test_load_with_target_converts_to_module_dtypes(tmp_path):
    module_record = {
        "w": br.ParamRecord("w", br.TensorData(np.ones((2, 2), np.float32))),
        "steps": br.TensorData(np.array([1], np.int64)),
        "mask": br.TensorData(np.array([True])),
        "extra_in_file_only": None,
    }
    rec = br.CompactRecorder()
    path = rec.record(module_record, tmp_path / "m")
    stored = rec.load(path)
    assert stored["w"].dtype is br.DType.F16 and stored["steps"].dtype is br.DType.I16
    loaded = rec.load(path, target=module_record)
    assert loaded["w"].dtype is br.DType.F32 and loaded["w"].id == "w"
    assert loaded["steps"].dtype is br.DType.I64
    assert loaded["mask"].dtype is br.DType.BOOL
    assert br.apply_dtypes(stored, module_record)["w"] == loaded["w"]
