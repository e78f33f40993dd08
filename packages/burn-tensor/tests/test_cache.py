"""burn_tensor.cache: the cache folder is 0700 and trusted only when this user owns it and no one
else can write it; verified entries never hand on a truncated, flipped or swapped file; cache
JSON of the wrong shape is ignored with one warning."""

from __future__ import annotations

import json
import os
import stat

import pytest
from burn_tensor import cache
from burn_tensor import _cache_dir
from burn_tensor.cache import CacheWarning

OTHER_UID = 40001


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("BURN_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setattr(_cache_dir, "_WARNED", set())  # each test sees its own warnings
    return tmp_path / "c"


def _mode(p):
    return stat.S_IMODE(os.lstat(p).st_mode)


def test_default_location_follows_burn_cache_dir_then_xdg_then_home(monkeypatch, tmp_path):
    monkeypatch.setenv("BURN_CACHE_DIR", str(tmp_path / "b"))
    assert cache.cache_root() == tmp_path / "b"
    monkeypatch.delenv("BURN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert cache.cache_root() == tmp_path / "x" / "burn"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert cache.cache_root() == tmp_path / "h" / ".cache" / "burn"


def test_folders_are_created_0700_whatever_the_umask(root):
    old = os.umask(0)
    try:
        d = cache.cache_dir("a", "b")
    finally:
        os.umask(old)
    assert d == root / "a" / "b"
    for p in (root, root / "a", root / "a" / "b"):
        assert _mode(p) == 0o700, p


def test_missing_parents_of_the_root_are_created_0700(tmp_path, monkeypatch):
    monkeypatch.setenv("BURN_CACHE_DIR", str(tmp_path / "p" / "q" / "c"))
    assert cache.cache_dir("k") is not None
    assert _mode(tmp_path / "p") == 0o700 and _mode(tmp_path / "p" / "q") == 0o700


@pytest.mark.skipif(os.getuid() != 0, reason="chown to another uid needs root")
@pytest.mark.parametrize("which", ["root", "sub"])
def test_a_folder_owned_by_another_user_is_not_used(root, which):
    target = root if which == "root" else root / "k"
    os.makedirs(target, mode=0o700)
    os.chown(target, OTHER_UID, -1)
    with pytest.warns(CacheWarning, match=f"owned by uid {OTHER_UID}"):
        assert cache.cache_dir("k") is None


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o702])
def test_a_folder_others_can_write_is_not_used(root, mode):
    os.makedirs(root / "k")
    os.chmod(root / "k", mode)
    with pytest.warns(CacheWarning, match="writable by group or others"):
        assert cache.cache_dir("k") is None


def test_a_symlinked_folder_is_not_used(root, tmp_path):
    os.makedirs(root)
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    os.symlink(tmp_path / "elsewhere", root / "k")
    with pytest.warns(CacheWarning, match="symbolic link"):
        assert cache.cache_dir("k") is None


def test_an_unusable_folder_warns_once(root):
    os.makedirs(root, mode=0o777)
    os.chmod(root, 0o777)
    with pytest.warns(CacheWarning) as record:
        for _ in range(3):
            assert cache.cache_dir("k") is None
    assert len(record) == 1


def test_process_dir_is_private_and_fresh():
    d = cache.process_dir("test-cache")
    assert _mode(d) == 0o700 and os.lstat(d).st_uid == os.getuid()
    assert d.name.startswith("burn-test-cache-") and cache.process_dir("test-cache") == d


# -- verified entries ----------------------------------------------------------------------------
@pytest.fixture
def entry(root):
    d = cache.cache_dir("bin")
    cache.write_verified(d / "a.bin", b"A" * 1000)
    cache.write_verified(d / "b.bin", b"B" * 1000)
    return d


def test_an_entry_reads_back_with_its_sidecar(entry):
    assert cache.read_verified(entry / "a.bin") == b"A" * 1000
    line = (entry / "a.bin.sum").read_text().split()
    assert line[:3] == ["burn-cache-v1", "a.bin", "1000"] and len(line[3]) == 64
    assert not [p for p in entry.iterdir() if p.name.endswith(".tmp")]  # no temporaries left
    assert cache.check(entry / "a.bin")


def _gone(p):
    return not p.exists() and not cache.sidecar(p).exists()


def test_a_truncated_entry_is_deleted(entry):
    with open(entry / "a.bin", "r+b") as f:
        f.truncate(500)
    assert cache.read_verified(entry / "a.bin") is None and _gone(entry / "a.bin")


def test_a_bit_flip_is_deleted(entry):
    data = bytearray((entry / "a.bin").read_bytes())
    data[123] ^= 0x10
    (entry / "a.bin").write_bytes(bytes(data))
    assert not cache.check(entry / "a.bin") and _gone(entry / "a.bin")


def test_swapped_entries_are_deleted(entry):
    # the binaries swapped (same size): each sidecar's hash no longer matches
    a, b = (entry / "a.bin").read_bytes(), (entry / "b.bin").read_bytes()
    (entry / "a.bin").write_bytes(b)
    (entry / "b.bin").write_bytes(a)
    assert cache.read_verified(entry / "a.bin") is None and _gone(entry / "a.bin")
    # a whole entry (file and sidecar) moved to another entry's name: the sidecar names its own
    os.replace(entry / "b.bin", entry / "c.bin")
    os.replace(entry / "b.bin.sum", entry / "c.bin.sum")
    assert cache.read_verified(entry / "c.bin") is None and _gone(entry / "c.bin")


def test_a_missing_or_malformed_sidecar_is_deleted(entry):
    os.unlink(entry / "a.bin.sum")
    assert cache.read_verified(entry / "a.bin") is None and _gone(entry / "a.bin")
    (entry / "b.bin.sum").write_text("burn-cache-v1 b.bin 1000 nothex\n")
    assert not cache.check(entry / "b.bin") and _gone(entry / "b.bin")


def test_a_symlinked_entry_is_not_followed(entry, tmp_path):
    target = tmp_path / "target"
    target.write_bytes(b"A" * 1000)
    os.replace(entry / "a.bin", entry / "keep")
    os.symlink(target, entry / "a.bin")
    assert cache.read_verified(entry / "a.bin") is None and _gone(entry / "a.bin")
    assert target.read_bytes() == b"A" * 1000  # the target itself is untouched


def test_publish_moves_a_compiler_output_into_place(entry):
    tmp = cache.temp_file(entry / "k.so", ".tmp.so")
    assert _mode(tmp) == 0o600 and tmp.name.startswith(".k.so.")
    tmp.write_bytes(b"ELF")
    cache.publish(tmp, entry / "k.so")
    assert not tmp.exists() and cache.read_verified(entry / "k.so") == b"ELF"


# -- JSON ----------------------------------------------------------------------------------------
def _dict_only(v):
    return None if isinstance(v, dict) else f"not an object but {type(v).__name__}"


@pytest.mark.parametrize("text", ["[]", "5", '"x"', "{bad json", b"\xff\xfe"])
def test_bad_json_is_ignored_with_one_warning(root, text):
    p = cache.cache_dir() / "x.json"
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.warns(CacheWarning) as record:
        for _ in range(3):
            assert cache.read_json(p, _dict_only) is None
    assert len(record) == 1 and str(p) in str(record[0].message)
    cache.write_json(p, {"ok": 1})
    assert json.loads(p.read_text()) == {"ok": 1}


def test_a_missing_json_file_is_silent(root):
    assert cache.read_json(cache.cache_dir() / "none.json", _dict_only) is None
