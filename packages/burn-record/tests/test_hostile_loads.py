"""Hostile record files: decompression bombs, object floods, impossible shapes, and files
truncated while they load. Each load runs in a fresh process (`load_child.py`) whose peak RSS
is measured: a loader must refuse the file, and its memory must stay near what it had before."""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import msgpack
import numpy as np
import pytest
import zstandard

import burn_record as br
from _record_bombs import forge_content_size
from load_child import launch
from burn_record._frame import MAGIC_BIN, MAGIC_MPK, frame

ZEROS = 256 << 20  # bytes each bomb expands to
STEP = 1 << 20
# A refused file may cost the loader this much over its imports: one decompression step and
# the bookkeeping around it, far below the bomb's size.
SLACK_MIB = 48


def _load(recorder: str, path: Path, mmap: str | None = None) -> dict:
    return launch(recorder, str(path), *([mmap] if mmap else []))


def _zeros(n: int):
    chunk = bytes(STEP)
    for _ in range(n // STEP):
        yield chunk


def _gzip(chunks) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    out = [c.compress(ch) for ch in chunks]
    return b"".join(out) + c.flush()


def _zstd(chunks, size: int = -1) -> bytes:
    c = zstandard.ZstdCompressor(level=3, write_content_size=size >= 0)
    import io

    buf = io.BytesIO()
    with c.stream_writer(buf, size=size, closefd=False) as w:
        for ch in chunks:
            w.write(ch)
    return buf.getvalue()


def _refused_small(out: dict, kind: type) -> None:
    assert out["error"] == kind.__name__, out
    assert out["rss_after"] - out["rss_before"] < SLACK_MIB, out


@pytest.mark.parametrize(
    "ext,recorder", [("mpk.gz", "NamedMpkGzFileRecorder"), ("bin.gz", "BinGzFileRecorder")]
)
def test_gzip_bomb_of_zeros_is_refused_after_one_step(tmp_path, ext, recorder):
    path = tmp_path / f"bomb.{ext}"
    path.write_bytes(_gzip(_zeros(ZEROS)))
    assert path.stat().st_size < ZEROS // 500
    out = _load(recorder, path)
    _refused_small(out, br.RecordFormatError)
    assert "expects" in out["message"] and "unknown data" in out["message"]


@pytest.mark.parametrize("declare", [False, True])
def test_zstd_bomb_of_zeros_is_refused_after_one_step(tmp_path, declare):
    path = tmp_path / "bomb.mpk.zst"
    path.write_bytes(_zstd(_zeros(ZEROS), ZEROS if declare else -1))
    assert path.stat().st_size < 64 << 10
    out = _load("NamedMpkZstFileRecorder", path)
    _refused_small(out, br.RecordFormatError)


def test_zstd_frame_holding_more_than_it_states_is_refused(tmp_path):
    # A valid record head, then zeros: a real frame of 256 MiB whose header is rewritten to
    # state 4 MiB. Decompression stops at the stated size.
    real = zstandard.ZstdCompressor(level=3).compress(MAGIC_MPK + bytes(ZEROS))
    assert zstandard.frame_content_size(real) == ZEROS + 8
    path = tmp_path / "liar.mpk.zst"
    path.write_bytes(forge_content_size(real, 4 << 20))
    out = _load("NamedMpkZstFileRecorder", path)
    assert out["error"] == "RecordCorruptedError", out
    assert "4194304 bytes its container states" in out["message"], out
    assert out["rss_after"] - out["rss_before"] < SLACK_MIB + 8, out


def test_flood_of_empty_maps_is_refused_fast(tmp_path):
    n = 10_000_000
    item = b"\xdd" + struct.pack(">I", n) + b"\x80" * n
    body = b"\x82" + msgpack.packb("metadata") + msgpack.packb({}) + msgpack.packb("item") + item
    path = tmp_path / "flood.mpk"
    path.write_bytes(b"".join(frame([body], MAGIC_MPK)))
    out = _load("NamedMpkFileRecorder", path)
    assert out["error"] == "RecordCorruptedError", out
    assert "BURN_RECORD_MAX_OBJECTS" in out["message"]
    # The file itself is read (10 MiB), plus at most the object budget's worth of dicts.
    assert out["rss_after"] - out["rss_before"] < 64 + 2 * path.stat().st_size / 2**20, out
    assert out["seconds"] < 30, out


def test_json_flood_is_refused_before_parsing(tmp_path):
    rec = br.PrettyJsonFileRecorder()
    good = rec.file_path(tmp_path / "ok")
    rec.record({"w": br.TensorData(np.arange(3.0, dtype=np.float32))}, good)
    head, _, _ = good.read_bytes().partition(b"\n")
    body = b'"metadata": {}, "item": [' + b"[]," * 2_000_000 + b"[]]}"
    line = f'{{"burn_record": "json/1 len={len(body)} crc32={zlib.crc32(body):08x}",\n'.encode()
    assert head.startswith(b'{"burn_record": "json/1 ')
    with pytest.raises(br.RecordCorruptedError, match="BURN_RECORD_MAX_OBJECTS"):
        rec.from_bytes(line + body)


def test_bin_shape_past_any_array_names_the_tensor():
    rec = br.BinBytesRecorder()
    good = rec.record({"w": br.TensorData(np.zeros((0, 3), np.float32))})
    payload = bytearray(good[12:-16])
    shape_at = payload.rfind(struct.pack("<2Q", 0, 3))
    assert shape_at > 0
    payload[shape_at : shape_at + 16] = struct.pack("<2Q", 0, 2**64 - 1)
    bad = b"".join(frame([bytes(payload)], MAGIC_BIN))
    with pytest.raises(
        br.RecordCorruptedError, match=r"w: tensor shape \[0, 18446744073709551615\]"
    ):
        rec.load(bad)


@pytest.mark.skipif(not hasattr(signal, "SIGBUS"), reason="POSIX only")
def test_file_truncated_while_loading_does_not_kill_the_process(tmp_path):
    """Another program truncates the file in place mid-load: reading (the default) sees the
    bytes it read; a memory map would take SIGBUS. Shown by a loader that truncates its own
    file after opening it."""
    rec = br.NamedMpkFileRecorder()
    path = rec.record({"w": br.TensorData(np.ones(1 << 20, np.float32))}, tmp_path / "m")
    code = (
        "import os, sys, burn_record as br\n"
        "from burn_record import _recorder\n"
        "p = sys.argv[1]\n"
        "orig = br.NamedMpkFileRecorder.from_bytes\n"
        "def cut(self, data, **kw):\n"
        "    os.truncate(p, 100)\n"
        "    return orig(self, data, **kw)\n"
        "br.NamedMpkFileRecorder.from_bytes = cut\n"
        "out = br.NamedMpkFileRecorder().load(p)\n"
        "print(float(out['w'].numpy().sum()))\n"
    )
    run = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    assert run.returncode == 0, (run.returncode, run.stderr[-500:])
    assert run.stdout.strip() == str(float(1 << 20))
    # The opt-in map is what used to be the default: there the same truncation is fatal.
    env = dict(os.environ, BURN_RECORD_MMAP="1")
    path = rec.record({"w": br.TensorData(np.ones(1 << 20, np.float32))}, tmp_path / "m")
    run = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env
    )
    assert run.returncode == -signal.SIGBUS, (run.returncode, run.stderr[-500:])


def test_recorder_class_is_accepted_and_other_things_are_named(tmp_path):
    pytest.importorskip("burn_nn")
    from burn_ndarray import NdArray
    from burn_nn import LinearConfig

    dev = NdArray().device(0)
    model = LinearConfig(2, 3).init(dev)
    path = model.save_file(tmp_path / "m", br.CompactRecorder)
    assert path.name == "m.mpk.gz"
    back = model.load_file(path, br.CompactRecorder, dev)
    assert np.allclose(back.weight.val().numpy(), model.weight.val().numpy(), atol=1e-3)
    with pytest.raises(
        TypeError, match="Module.load_file: expected a burn_record recorder.*PosixPath"
    ):
        model.load_file(path, tmp_path, dev)
