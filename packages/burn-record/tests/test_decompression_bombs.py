"""F11: compressed records that begin exactly as a record should (the right magic after
decompression), then expand far past what their size can honestly hold. Each is built here,
loaded in a fresh process (`load_child.py`), and must be refused with RecordCorruptedError naming
the file, its peak RSS growing by at most 64 MiB + 2 x the file's size. Before the bound, a 32 KB
`.mpk.zst` and a 1 MB `.mpk.gz` each took 1.07 GiB, and 4 GiB of zeros in gzip (its ISIZE
trailer wraps to 4) grew until MemoryError."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _record_bombs import forge_content_size, gzip_bomb, zstd_bomb
from load_child import launch

import burn_record as br
from burn_record._frame import JSON_PREFIX, MAGIC_BIN, MAGIC_MPK

FRAME_HEAD = b"\x01\x00\x00\x00"  # frame version 1, no flags
HEADS = {
    "mpk": MAGIC_MPK + FRAME_HEAD,
    "bin": MAGIC_BIN + FRAME_HEAD,
    "json": JSON_PREFIX + b'1 len=999999999999 crc32=00000000",\n',
}
ZEROS = 256 << 20


def load_in_child(recorder: str, path: Path) -> dict:
    return launch(recorder, str(path))


def assert_refused(out: dict, path: Path, phrase: str) -> None:
    assert out["error"] == "RecordCorruptedError", out
    assert phrase in out["message"] and str(path) in out["message"], out
    assert out["rss_after"] - out["rss_before"] <= 64 + 2 * path.stat().st_size / 2**20, out


@pytest.mark.parametrize(
    "recorder,payload,ext",
    [
        ("NamedMpkGzFileRecorder", "mpk", "mpk.gz"),
        ("BinGzFileRecorder", "bin", "bin.gz"),
        ("JsonGzFileRecorder", "json", "json.gz"),
    ],
)
def test_gzip_bomb_with_the_right_head_is_refused_at_the_bound(tmp_path, recorder, payload, ext):
    path = tmp_path / f"bomb.{ext}"
    path.write_bytes(gzip_bomb(HEADS[payload], ZEROS))
    out = load_in_child(recorder, path)
    assert_refused(out, path, "compressed bytes may hold")


def test_gzip_of_4_gib_of_zeros_whose_size_wraps_is_refused(tmp_path):
    path = tmp_path / "wrap.mpk.gz"
    path.write_bytes(gzip_bomb(HEADS["mpk"], 4 << 30))
    assert int.from_bytes(path.read_bytes()[-4:], "little") == len(HEADS["mpk"])  # wrapped
    out = load_in_child("NamedMpkGzFileRecorder", path)
    assert_refused(out, path, "compressed bytes may hold")


@pytest.mark.parametrize(
    "recorder,payload,ext",
    [("NamedMpkZstFileRecorder", "mpk", "mpk.zst"), ("BinZstFileRecorder", "bin", "bin.zst")],
)
def test_zstd_bomb_with_the_right_head_is_refused_at_the_bound(tmp_path, recorder, payload, ext):
    path = tmp_path / f"bomb.{ext}"
    path.write_bytes(zstd_bomb(HEADS[payload], ZEROS))
    out = load_in_child(recorder, path)
    assert_refused(out, path, "states that it decompresses to")


def test_zstd_frame_stating_nothing_is_refused_at_the_bound(tmp_path):
    path = tmp_path / "silent.mpk.zst"
    path.write_bytes(zstd_bomb(HEADS["mpk"], ZEROS, declare=False))
    out = load_in_child("NamedMpkZstFileRecorder", path)
    assert_refused(out, path, "compressed bytes may hold")


def test_zstd_frame_stating_less_than_it_holds_stops_at_its_statement(tmp_path):
    path = tmp_path / "liar.mpk.zst"
    path.write_bytes(forge_content_size(zstd_bomb(HEADS["mpk"], ZEROS), 16 << 20))
    out = load_in_child("NamedMpkZstFileRecorder", path)
    assert_refused(out, path, "16777216 bytes its container states")


def test_in_memory_bytes_are_bounded_the_same_way():
    data = gzip_bomb(HEADS["mpk"], 64 << 20)
    with pytest.raises(br.RecordCorruptedError, match="compressed bytes may hold"):
        br.NamedMpkGzFileRecorder().from_bytes(data)


# Honest records are far below the bound: a 50 MB float32 tensor compresses about 1.1x.
@pytest.mark.parametrize("cls", [br.NamedMpkZstFileRecorder, br.BinGzFileRecorder])
def test_a_50_mb_float32_record_round_trips(tmp_path, cls):
    values = np.random.default_rng(0).random(12_500_000, dtype=np.float32)
    rec = cls()
    path = rec.record({"w": br.ParamRecord("p0", br.TensorData(values))}, tmp_path / "m")
    loaded = rec.load(path)
    assert loaded["w"].id == "p0"
    np.testing.assert_array_equal(loaded["w"].value.numpy(), values)


def test_a_record_compressing_past_the_ratio_loads_once_allowed(tmp_path, monkeypatch):
    # 40 MiB of zeros compress 28000x: an honest record the default ratio refuses, by name.
    rec = br.NamedMpkZstFileRecorder()
    zeros = br.TensorData(np.zeros(10 << 20, np.float32))
    path = rec.record({"w": zeros}, tmp_path / "z")
    with pytest.raises(br.RecordCorruptedError, match="BURN_RECORD_MAX_RATIO") as info:
        rec.load(path)
    assert str(path) in str(info.value)
    monkeypatch.setenv("BURN_RECORD_MAX_RATIO", "1000000")
    assert not rec.load(path)["w"].numpy().any()
