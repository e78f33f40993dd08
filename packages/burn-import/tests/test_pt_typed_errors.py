"""Files that used to escape as raw exceptions (or misleading ones) now raise `RecordImportError`
naming the file and what is wrong; and the memory budgets leave honest files alone."""

from __future__ import annotations

import json
import pickle
import pickletools

import numpy as np
import pytest
from _pt_craft import state_dict, tensor, write_legacy, write_zip
from burn_import import RecordImportError, load_pytorch, load_safetensors
from burn_import._unpickler import safe_loads

GIANT = (0, 2**62, 2**62)


# F22: a zero-size tensor whose other dims overflow numpy raised a bare ValueError ("array is too
# big") from safetensors and legacy files, and "unreadable zip" from zip files.
@pytest.mark.parametrize("container", ["safetensors", "legacy", "zip"])
def test_zero_size_tensor_with_giant_dims(tmp_path, container):
    if container == "safetensors":
        spec = {"z": {"dtype": "F32", "shape": list(GIANT), "data_offsets": [0, 0]}}
        header = json.dumps(spec).encode()
        path = tmp_path / "z.safetensors"
        path.write_bytes(len(header).to_bytes(8, "little") + header)
        load = load_safetensors
    elif container == "legacy":
        blob = state_dict({"z": tensor("0", 0, GIANT, (0, 0, 0), legacy=True)})
        path = write_legacy(tmp_path / "z.pt", blob, {"0": (0, b"")})
        load = load_pytorch
    else:
        blob = state_dict({"z": tensor("0", 0, GIANT, (0, 0, 0))})
        path = write_zip(tmp_path / "z.pt", blob, {"0": b""})
        load = load_pytorch
    with pytest.raises(RecordImportError) as info:
        load(path)
    message = str(info.value)
    assert message.startswith("z.") and "z: shape [0, 4611686018427387904" in message
    assert "unreadable" not in message


def test_honest_zero_size_tensors_still_load(tmp_path):
    blob = state_dict({"e": tensor("0", 0, (0, 3), (3, 1))})
    path = write_zip(tmp_path / "e.pt", blob, {"0": b""})
    assert load_pytorch(path)["e"].array.shape == (0, 3)


@pytest.mark.parametrize("load", [load_pytorch, load_safetensors])
def test_a_directory_is_a_typed_error_naming_it(tmp_path, load):
    with pytest.raises(RecordImportError, match=f"{tmp_path}: cannot open"):
        load(tmp_path)


# F8's rule, memo slots numbered as a pickler numbers them, accepts what picklers write.
def test_memo_rule_accepts_every_protocol_and_optimized_pickles():
    shared = [1.5, "x"]
    data = {"a": shared, "b": shared, "c": (shared, {"d": shared})}
    for protocol in range(6):
        blob = pickle.dumps(data, protocol=protocol)
        for variant in (blob, pickletools.optimize(blob)):
            assert safe_loads(variant) == data


def test_memo_index_past_the_opcodes_read_is_refused():
    blob = b"\x80\x02]q\x05."  # slot 5 set by the second opcode
    with pytest.raises(RecordImportError, match="memo index 5 at byte 3"):
        safe_loads(blob, "m.pkl")


def test_the_ratio_can_be_raised(tmp_path, monkeypatch):
    # 12 broadcast tensors of 4 MiB from a 2 KB file: over the 32 MiB floor by default.
    entries = {f"t{k}": tensor("0", 1, (1024, 1024), (0, 0)) for k in range(12)}
    path = write_zip(tmp_path / "b.pt", state_dict(entries), {"0": np.float32(2).tobytes()})
    with pytest.raises(RecordImportError, match="BURN_IMPORT_MAX_RATIO"):
        load_pytorch(path)
    monkeypatch.setenv("BURN_IMPORT_MAX_RATIO", "100000")
    loaded = load_pytorch(path)
    assert len(loaded) == 12 and float(loaded["t11"].array[1023, 1023]) == 2.0


def test_a_bad_ratio_setting_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("BURN_IMPORT_MAX_RATIO", "lots")
    with pytest.raises(ValueError, match="BURN_IMPORT_MAX_RATIO must be a positive integer"):
        safe_loads(pickle.dumps(1))
