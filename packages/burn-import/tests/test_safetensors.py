"""The safetensors reader/writer and `SafetensorsFileRecorder`: layout, round trips, errors."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from burn_import import (
    AdapterType,
    LoadArgs,
    RecordImportError,
    SafetensorsFileRecorder,
    TensorMismatchError,
    load_safetensors,
    safetensors_metadata,
    save_safetensors,
)
from burn_nn import LinearConfig
from burn_record import HalfPrecisionSettings, ParamRecord, TensorData
from burn_tensor import DType

ARRAYS = {
    "f64": np.array([[1.5, -2.0]], np.float64),
    "f32": np.array([np.nan, -0.0, np.inf], np.float32),
    "f16": np.array([65504.0, 6e-8], np.float16),
    "i64": np.array([-(2**63), 2**63 - 1], np.int64),
    "i32": np.array([[1], [2]], np.int32),
    "i16": np.array([-7], np.int16),
    "i8": np.array([-128, 127], np.int8),
    "u8": np.array([0, 255], np.uint8),
    "bool": np.array([True, False, True]),
    "empty": np.zeros((0, 4), np.float32),
}
CODES = {"f64": "F64", "f32": "F32", "f16": "F16", "i64": "I64", "i32": "I32", "i16": "I16"}
CODES |= {"i8": "I8", "u8": "U8", "bool": "BOOL", "empty": "F32"}


def test_writer_layout_follows_the_format(tmp_path):
    path = save_safetensors(ARRAYS, tmp_path / "a.safetensors", {"k": "v"})
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    assert n % 8 == 0  # header padded with spaces so the data starts aligned
    header = json.loads(raw[8 : 8 + n])
    assert header.pop("__metadata__") == {"k": "v"}
    data = raw[8 + n :]
    cursor = 0
    for key in sorted(header, key=lambda k: header[k]["data_offsets"][0]):
        entry = header[key]
        begin, end = entry["data_offsets"]
        assert begin == cursor and begin % ARRAYS[key].dtype.itemsize == 0
        assert entry["dtype"] == CODES[key] and entry["shape"] == list(ARRAYS[key].shape)
        assert data[begin:end] == ARRAYS[key].astype(ARRAYS[key].dtype.newbyteorder("<")).tobytes()
        cursor = end
    assert cursor == len(data)


def test_round_trip_every_burn_dtype(tmp_path):
    loaded = load_safetensors(save_safetensors(ARRAYS, tmp_path / "a.safetensors"))
    assert list(loaded) == list(ARRAYS) or set(loaded) == set(ARRAYS)
    for key, want in ARRAYS.items():
        got = loaded[key].array
        assert (
            got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()
        )


def test_loaded_tensors_are_copies_not_views_of_the_file(tmp_path):
    path = save_safetensors({"w": np.arange(4, dtype=np.float32)}, tmp_path / "w.safetensors")
    loaded = load_safetensors(path)
    size = path.stat().st_size
    with open(path, "r+b") as f:  # overwrite the data in place
        f.seek(size - 16)
        f.write(b"\xff" * 16)
    assert loaded["w"].tolist() == [0.0, 1.0, 2.0, 3.0]


def test_recorder_round_trip_keeps_ids_values_and_burn_layout(tmp_path, device):
    model = LinearConfig(3, 2).init(device)
    rec = SafetensorsFileRecorder()
    path = rec.record(model, tmp_path / "linear")
    assert path.name == "linear.safetensors"
    assert safetensors_metadata(path)["format"] == "burn"
    record = rec.load(path, device)  # no target: ids come from the file
    assert record["weight"].id == str(model.weight.id)
    assert list(record["weight"].shape) == [3, 2]  # Burn's layout, not transposed back
    again = LinearConfig(3, 2).init(device).load_record(record)
    assert again.weight.id == model.weight.id
    assert again.weight.val().numpy().tobytes() == model.weight.val().numpy().tobytes()
    targeted = rec.load(path, device, target=LinearConfig(3, 2).init(device))
    assert targeted["weight"].id == str(model.weight.id)
    # Forcing the PyTorch adapter on a burn-py file transposes: the shape check catches it.
    forced = LoadArgs(path).with_adapter_type(AdapterType.PyTorch)
    with pytest.raises(TensorMismatchError, match=r"expected shape \[3, 2\], got \[2, 3\]"):
        rec.load(forced, device, target=LinearConfig(3, 2).init(device))


def test_half_precision_recorder_writes_f16(tmp_path, device):
    model = LinearConfig(3, 2).init(device)
    path = SafetensorsFileRecorder(HalfPrecisionSettings).record(
        model.into_record(), tmp_path / "h"
    )
    header = json.loads(path.read_bytes()[8:][: struct.unpack("<Q", path.read_bytes()[:8])[0]])
    assert header["weight"]["dtype"] == "F16" and header["bias"]["dtype"] == "F16"
    loaded = load_safetensors(path)["weight"].array
    assert np.array_equal(loaded, model.weight.val().numpy().astype(np.float16))


def test_no_target_record_nests_keys(tmp_path, device):
    path = save_safetensors(
        {"a.b.w": np.ones(2, np.float32), "c": np.ones(1, np.int64)}, tmp_path / "x"
    )
    record = SafetensorsFileRecorder().load(path, device)
    assert list(record["a"]["b"]["w"].shape) == [2] and record["c"].dtype is DType.I32
    sub = SafetensorsFileRecorder().load(LoadArgs(path).with_top_level_key("a"), device)
    assert set(sub) == {"b"}
    with pytest.raises(RecordImportError, match="no tensor key starts with 'zz.'"):
        SafetensorsFileRecorder().load(LoadArgs(path).with_top_level_key("zz"), device)


def test_record_skips_non_tensor_leaves(tmp_path):
    item = {
        "w": ParamRecord("p1", TensorData([1.0])),
        "bias": None,
        "step": 3,
        "t": TensorData([2]),
    }
    path = SafetensorsFileRecorder().record(item, tmp_path / "r")
    assert set(load_safetensors(path)) == {"w", "t"}
    assert json.loads(safetensors_metadata(path)["burn.param_ids"]) == {"w": "p1"}


def build(header: dict, data: bytes, length: int | None = None) -> bytes:
    text = json.dumps(header).encode()
    return (len(text) if length is None else length).to_bytes(8, "little") + text + data


W = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x01\x02", "file is 2 bytes, shorter than the 8-byte header length"),
        (build({"w": W}, b"\0" * 8, length=10**9), "header length 1000000000 does not fit a file"),
        ((3).to_bytes(8, "little") + b"{x}", "header is not valid JSON"),
        ((2).to_bytes(8, "little") + b"[]", "header must be a JSON object"),
        (b"\x13" + b"\0" * 7 + b'{"w": 1, "w": 2}   ', "duplicate key in the header"),
        (build({"w": {"dtype": "F32"}}, b""), "'w': needs exactly dtype, shape and data_offsets"),
        (build({"w": {**W, "dtype": "F7"}}, b"\0" * 8), "'w': unknown dtype 'F7'"),
        (build({"w": {**W, "shape": [-1]}}, b"\0" * 8), "'w': malformed shape"),
        (build({"w": {**W, "data_offsets": [8, 0]}}, b"\0" * 8), "'w': malformed data_offsets"),
        (build({"w": {**W, "shape": [3]}}, b"\0" * 8), "'w': F32[3] needs 12 bytes, data_offsets give 8"),
        (build({"w": W}, b"\0" * 4), "cover 8 data bytes but the file holds 4 (truncated)"),
        (build({"w": W}, b"\0" * 12), "cover 8 data bytes but the file holds 12 (trailing bytes)"),
        (build({"w": {**W, "data_offsets": [4, 12]}}, b"\0" * 12), "'w' at byte 4 leaves a hole"),
        (build({"w": W, "v": W}, b"\0" * 8), "at byte 0 overlaps the previous tensor"),
        (build({"__metadata__": {"a": 1}}, b""), "__metadata__ must map strings to strings"),
        (build({"w": {**W, "dtype": "F8_E4M3", "data_offsets": [0, 2]}}, b"\0" * 2), "w: element type float8_e4m3fn is not supported"),
        (build({"w": {**W, "dtype": "U64", "shape": [1]}}, b"\xff" * 8), "uint64 values up to 18446744073709551615 do not fit int64"),
    ],
)  # fmt: skip
def test_malformed_files_are_clear_errors(tmp_path, content, message):
    (tmp_path / "bad.safetensors").write_bytes(content)
    with pytest.raises(RecordImportError) as err:
        load_safetensors(tmp_path / "bad.safetensors")
    assert message in str(err.value)
    assert str(err.value).startswith("bad.safetensors: ")
