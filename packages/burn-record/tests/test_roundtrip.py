"""Every recorder x every precision setting round-trips a nested item exactly (up to the cast)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import burn_record as br


def test_file_roundtrip(file_recorder_cls, settings_cls, item, tmp_path, identical, expected):
    rec = file_recorder_cls(settings_cls)
    path = rec.record(item, tmp_path / "model")
    assert path == tmp_path / f"model.{rec.file_extension()}"
    assert path.is_file()
    loaded = rec.load(tmp_path / "model")
    identical(expected(item, settings_cls()), loaded)
    # Loading by the full name works as well and gives the same item.
    identical(loaded, rec.load(path))


def test_bytes_roundtrip(bytes_recorder_cls, settings_cls, item, identical, expected):
    rec = bytes_recorder_cls(settings_cls())
    data = rec.record(item)
    assert isinstance(data, bytes)
    identical(expected(item, settings_cls()), rec.load(data))
    identical(expected(item, settings_cls()), rec.load(bytearray(data)))


def test_param_ids_and_stored_dtypes(item, tmp_path):
    loaded = br.NamedMpkFileRecorder(br.DoublePrecisionSettings).load(
        br.NamedMpkFileRecorder(br.DoublePrecisionSettings).record(item, tmp_path / "m")
    )
    assert [layer["weight"].id for layer in loaded["layers"]] == ["w0", "w1"]
    assert loaded["norm"]["gamma"].id == "g"
    assert loaded["norm"]["gamma"].dtype is br.DType.F64  # f16 upcast on save
    assert loaded["buffers"][0].dtype is br.DType.I64
    assert loaded["buffers"][4].dtype is br.DType.BOOL


def test_file_and_bytes_recorders_share_formats(item, tmp_path, identical):
    # BinBytesRecorder embeds what BinFileRecorder wrote (the book's "No Storage" workflow).
    path = br.BinFileRecorder().record(item, tmp_path / "m")
    identical(br.BinFileRecorder().load(path), br.BinBytesRecorder().load(path.read_bytes()))
    path = br.NamedMpkFileRecorder().record(item, tmp_path / "m")
    identical(
        br.NamedMpkFileRecorder().load(path), br.NamedMpkBytesRecorder().load(path.read_bytes())
    )
    # Compact files load with the plain gzip recorder too: formats match, settings only differ.
    path = br.CompactRecorder().record(item, tmp_path / "c")
    assert br.NamedMpkGzFileRecorder().load(path)["layers"][0]["weight"].dtype is br.DType.F16


def test_extensions(tmp_path):
    expected = {
        br.DefaultFileRecorder: "mpk",
        br.NamedMpkFileRecorder: "mpk",
        br.NamedMpkGzFileRecorder: "mpk.gz",
        br.NamedMpkZstFileRecorder: "mpk.zst",
        br.BinFileRecorder: "bin",
        br.BinGzFileRecorder: "bin.gz",
        br.BinZstFileRecorder: "bin.zst",
        br.JsonGzFileRecorder: "json.gz",
        br.PrettyJsonFileRecorder: "json",
        br.CompactRecorder: "mpk.gz",
    }
    for cls, ext in expected.items():
        rec = cls()
        assert rec.file_extension() == ext
        assert rec.record({"x": 1}, tmp_path / f"a.{ext}") == tmp_path / f"a.{ext}"
        # A different suffix is kept and the extension appended, like "model.v2" -> "model.v2.mpk".
        assert rec.record({"x": 1}, str(tmp_path / "model.v2")) == tmp_path / f"model.v2.{ext}"
    assert br.NamedMpkFileRecorder().record({}, tmp_path / "deep" / "dir" / "m").is_file()


def test_default_settings():
    assert br.DefaultFileRecorder is br.NamedMpkFileRecorder
    assert br.NamedMpkFileRecorder().settings == br.FullPrecisionSettings()
    assert br.CompactRecorder().settings == br.HalfPrecisionSettings()
    assert br.SensitiveCompactRecorder.new().settings == br.HalfPrecisionSettings()
    assert br.CompactRecorder(br.FullPrecisionSettings).settings == br.FullPrecisionSettings()
    assert repr(br.BinFileRecorder(br.DoublePrecisionSettings())) == (
        "BinFileRecorder(DoublePrecisionSettings)"
    )
    assert br.BinFileRecorder() == br.BinFileRecorder(br.FullPrecisionSettings)
    with pytest.raises(TypeError):
        br.BinFileRecorder("f32")
    with pytest.raises(TypeError):
        br.FileRecorder()


@pytest.mark.parametrize(
    "cls", [br.BinBytesRecorder, br.NamedMpkBytesRecorder, br.JsonGzFileRecorder]
)
def test_scalar_edge_cases(cls, identical):
    item = {
        "floats": [math.nan, math.inf, -math.inf, -0.0, 5e-324, 1.7976931348623157e308],
        "ints": [0, -1, 2**63 - 1, 2**63, 2**64 - 1, -(2**63)],
        "bools": (True, False),
        "unicode": "Gewicht ∂ 重み",
        "numpy": [np.float32(0.5), np.int64(3), np.bool_(True)],
        "": "empty key",
    }
    rec = cls()
    loaded = rec.from_bytes(rec.to_bytes(item))
    identical({**item, "numpy": [0.5, 3, True]}, loaded)
    assert math.copysign(1.0, loaded["floats"][3]) == -1.0


@pytest.mark.parametrize(
    "cls", [br.BinBytesRecorder, br.NamedMpkBytesRecorder, br.PrettyJsonFileRecorder]
)
def test_dicts_that_look_like_tags_survive(cls, identical):
    # User dicts with the reserved key sets of the named layout are escaped, not misread.
    item = {
        "looks_like_param": {"id": "x", "param": 1},
        "looks_like_tensor": {"bytes": "b", "shape": [1], "dtype": "F32"},
        "looks_like_tuple": {"__tuple__": [1, 2]},
        "looks_like_escape": {"__dict__": {"__dict__": {}}},
        "root_list": [{"__tuple__": ()}],
    }
    rec = cls()
    identical(item, rec.from_bytes(rec.to_bytes(item)))


def test_top_level_items_of_any_kind(recorder_cls, identical):
    rec = recorder_cls()
    for item in [None, 3, 2.5, "s", [1, (2,)], (), br.TensorData(np.array([True]))]:
        identical(item, rec.from_bytes(rec.to_bytes(item)))


def test_large_tensors_stream_and_roundtrip(tmp_path, identical):
    # Large enough to take the streaming (zero-copy) path of both binary encoders.
    big = br.TensorData(np.random.default_rng(1).standard_normal((300, 300)).astype(np.float32))
    item = {"a": br.ParamRecord("big", big), "b": [big, 1]}
    for cls in [br.BinFileRecorder, br.NamedMpkFileRecorder, br.NamedMpkZstFileRecorder]:
        rec = cls()
        identical(item, rec.load(rec.record(item, tmp_path / "big")))


def test_pretty_json_is_valid_json_with_burn_layout(tmp_path):
    import json

    item = {"linear": {"weight": br.ParamRecord("abc", br.TensorData([[1.0, 2.0]]))}}
    path = br.PrettyJsonFileRecorder().record(item, tmp_path / "m")
    doc = json.loads(path.read_text())
    assert doc["metadata"] == {
        "float": "f32",
        "int": "i32",
        "format": "PrettyJsonFileRecorder",
        "version": br.RECORD_VERSION,
        "settings": "FullPrecisionSettings",
    }
    param = doc["item"]["linear"]["weight"]
    assert param["id"] == "abc"
    assert param["param"]["shape"] == [1, 2] and param["param"]["dtype"] == "F32"


def test_named_mpk_layout_matches_design(tmp_path):
    import msgpack

    item = {"w": br.ParamRecord("p", br.TensorData(np.array([1, 2], dtype=np.int64)))}
    data = br.NamedMpkBytesRecorder().record(item)
    # Frame: 12-byte header, 16-byte trailer; inside is a plain msgpack map.
    doc = msgpack.unpackb(data[12:-16])
    assert set(doc) == {"metadata", "item"}
    assert doc["metadata"]["int"] == "i32"
    param = doc["item"]["w"]["param"]
    assert param == {"bytes": np.array([1, 2], "<i4").tobytes(), "shape": [2], "dtype": "I32"}
