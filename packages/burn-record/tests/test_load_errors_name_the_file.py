"""Every error `FileRecorder.load` raises names the file, and a path that exists but cannot be
read is a `RecordReadError`, not a raw `IsADirectoryError` / `PermissionError`."""

from __future__ import annotations

import numpy as np
import pytest

import burn_record as br


def test_a_directory_is_a_record_read_error_naming_it(tmp_path):
    folder = tmp_path / "m.mpk"
    folder.mkdir()
    with pytest.raises(br.RecordReadError, match="cannot open .*m.mpk") as info:
        br.NamedMpkFileRecorder().load(folder)
    assert isinstance(info.value, OSError) and isinstance(info.value, br.RecordError)


@pytest.mark.parametrize("cls", [br.NamedMpkFileRecorder, br.NamedMpkGzFileRecorder])
def test_a_damaged_record_names_its_file_and_keeps_its_type(tmp_path, cls):
    rec = cls()
    path = rec.record({"w": br.TensorData(np.arange(64, dtype=np.float32))}, tmp_path / "m")
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(br.RecordCorruptedError) as info:
        rec.load(path)
    assert f"[file: {path}]" in str(info.value)


def test_a_wrong_recorder_names_the_file(tmp_path):
    gz = br.NamedMpkGzFileRecorder().record({"x": 1}, tmp_path / "m")
    path = tmp_path / "m.mpk.zst"
    path.write_bytes(gz.read_bytes())
    with pytest.raises(br.RecordFormatError, match=r"expects zstandard.*\[file: .*m\.mpk\.zst\]"):
        br.NamedMpkZstFileRecorder().load(path)
