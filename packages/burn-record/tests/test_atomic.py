"""Atomic writes: a failed save leaves the previous file intact and no temporary file behind."""

from __future__ import annotations

import os

import numpy as np
import pytest

import burn_record as br
from burn_record import _atomic

STREAMING = [
    br.BinFileRecorder,
    br.BinGzFileRecorder,
    br.BinZstFileRecorder,
    br.NamedMpkFileRecorder,
]


class Unrecordable:
    pass


def _big_then_bad():
    # ~1 MB of tensor is encoded and written before the encoder reaches the unrecordable value.
    big = br.TensorData(np.ones(1 << 18, np.float32))
    return {"a": big, "b": big, "z": Unrecordable()}


@pytest.mark.parametrize("cls", STREAMING, ids=lambda c: c.__name__)
def test_encoder_failure_midway_keeps_the_old_file(cls, tmp_path, monkeypatch):
    rec = cls()
    path = rec.record({"version": 1}, tmp_path / "model")
    before = path.read_bytes()

    removed_sizes = []
    real_unlink = os.unlink

    def spy_unlink(p, *a, **kw):
        removed_sizes.append(os.path.getsize(p))
        return real_unlink(p, *a, **kw)

    monkeypatch.setattr(_atomic.os, "unlink", spy_unlink)
    with pytest.raises(br.UnsupportedItemError, match="z: cannot record"):
        rec.record(_big_then_bad(), tmp_path / "model")
    assert path.read_bytes() == before
    assert rec.load(path) == {"version": 1}
    assert os.listdir(tmp_path) == [path.name]
    if cls is br.BinFileRecorder:
        # The failure really happened mid-stream: a partial temporary file existed, then was
        # removed.
        assert removed_sizes and removed_sizes[0] > 1 << 20


def test_failure_before_any_byte_and_for_new_files(tmp_path):
    for cls in (br.PrettyJsonFileRecorder, br.JsonGzFileRecorder, br.NamedMpkGzFileRecorder):
        with pytest.raises(br.UnsupportedItemError):
            cls().record(_big_then_bad(), tmp_path / "fresh")
    assert os.listdir(tmp_path) == []


def test_fsync_or_rename_failure_keeps_the_old_file(tmp_path, monkeypatch):
    rec = br.NamedMpkFileRecorder()
    path = rec.record({"v": 1}, tmp_path / "m")

    def broken(*_a, **_kw):
        raise OSError("disk full")

    for name in ("fsync", "replace"):
        with monkeypatch.context() as m:
            m.setattr(_atomic.os, name, broken)
            with pytest.raises(OSError, match="disk full"):
                rec.record({"v": 2}, tmp_path / "m")
        assert rec.load(path) == {"v": 1}
        assert os.listdir(tmp_path) == ["m.mpk"]


def test_overwrite_and_permissions(tmp_path):
    rec = br.BinFileRecorder()
    rec.record({"v": 1}, tmp_path / "m")
    path = rec.record({"v": 2}, tmp_path / "m")
    assert rec.load(path) == {"v": 2}
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_symlink_planted_at_the_temp_name_is_never_written_through(tmp_path, monkeypatch):
    # Even a writer who guesses the random part cannot redirect the write: O_EXCL refuses to
    # create the temp file over anything, a symlink included, and the target stays as it was.
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious")
    monkeypatch.setattr(_atomic.secrets, "token_hex", lambda n: "ab" * n)
    name = f".m.bin.{_atomic._HOST}-{os.getpid()}-{'ab' * 6}.tmp"
    (tmp_path / name).symlink_to(victim)
    with pytest.raises(FileExistsError):
        _atomic.atomic_write(tmp_path / "m.bin", lambda f: f.write(b"new"))
    assert victim.read_bytes() == b"precious" and not (tmp_path / "m.bin").exists()
