"""Temporary files of killed writes are removed on the next write to their folder, and a live
writer's are never touched (issue 21: 78 leftover files, 4.9 GB after 105 kills).

The kill -9 test runs 12 killed save processes by default (about 20 s on a loaded 2-core
machine); `BURN_KILL9_FULL=1` runs 50.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import burn_record as br
import numpy as np
from burn_record import _atomic

CHILD = str(Path(__file__).with_name("save_child.py"))
TAGGED = re.compile(r"^\.model\.mpk\.[0-9a-f]{8}-(\d+)-[0-9a-f]{12}\.tmp$")


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _spawn(folder: Path, mode: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, CHILD, str(folder), mode],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_sweep_removes_dead_writers_files_only(tmp_path):
    host = _atomic._HOST
    dead = _dead_pid()
    names = {
        "dead": f".m.mpk.{host}-{dead}-{'a' * 12}.tmp",
        "mine": f".m.mpk.{host}-{os.getpid()}-{'b' * 12}.tmp",
        "other_host": f".m.mpk.{'0' * 8 if host != '0' * 8 else '1' * 8}-{dead}-{'c' * 12}.tmp",
        "untagged_old": f".m.mpk.{'d' * 12}.tmp",
        "untagged_new": f".n.mpk.{'e' * 12}.tmp",
        "unrelated": ".cache.tmp",
    }
    for name in names.values():
        (tmp_path / name).write_bytes(b"x" * 10)
    old = _atomic._PROCESS_START - 2 * 3600
    os.utime(tmp_path / names["untagged_old"], (old, old))

    br.NamedMpkFileRecorder().record({"v": 1}, tmp_path / "fresh")

    left = set(os.listdir(tmp_path))
    assert names["dead"] not in left and names["untagged_old"] not in left
    for kept in ("mine", "other_host", "untagged_new", "unrelated"):
        assert names[kept] in left, kept
    assert "fresh.mpk" in left


def test_a_live_writers_temporary_file_survives_another_save(tmp_path):
    proc = _spawn(tmp_path, "hold")
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "holding").exists() and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.02)
        (held,) = [n for n in os.listdir(tmp_path) if n.startswith(".held.bin.")]
        assert re.fullmatch(rf"\.held\.bin\.[0-9a-f]{{8}}-{proc.pid}-[0-9a-f]{{12}}\.tmp", held)
        br.NamedMpkFileRecorder().record({"v": 2}, tmp_path / "other")  # sweeps the folder
        assert held in os.listdir(tmp_path)
        (tmp_path / "release").write_text("go\n")
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0 and out.strip() == "done", err
    assert (tmp_path / "held.bin").read_bytes() == b"\x80"
    assert _temps(tmp_path) == []


def test_kill_9_during_saves_leaves_no_temporary_files(tmp_path):
    """Kill -9 a process that saves a 4 MB record in a loop, N times. After every kill the record
    on disk loads whole; every temporary file left belongs to a killed writer, and is gone as soon
    as the next writer has saved once; after a last save none is left."""
    kills = 50 if os.environ.get("BURN_KILL9_FULL") == "1" else 12
    rng = random.Random(21)
    rec = br.NamedMpkFileRecorder()
    expected_w = np.arange(1 << 20, dtype=np.float32)
    killed_pids: set[int] = set()
    mid_write = 0
    for _ in range(kills):
        proc = _spawn(tmp_path, "loop")
        try:
            first = proc.stdout.readline()  # its first save is done: the sweep has run
            assert first.strip().isdigit(), proc.communicate()
            leftovers = [n for n in _temps(tmp_path) if int(TAGGED.match(n)[1]) != proc.pid]
            assert leftovers == [], f"earlier writers' temporary files survived a save: {leftovers}"
            time.sleep(rng.uniform(0.0, 0.25))
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()
            proc.stderr.close()
        killed_pids.add(proc.pid)
        temps = _temps(tmp_path)
        for name in temps:
            m = TAGGED.match(name)
            assert m and int(m[1]) in killed_pids, name
        mid_write += bool(temps)
        record = rec.load(tmp_path / "model.mpk")
        assert record["step"] >= 1
        np.testing.assert_array_equal(record["w"].array, expected_w)
    rec.record({"w": br.TensorData(expected_w), "step": -1}, tmp_path / "model")
    assert sorted(os.listdir(tmp_path)) == ["model.mpk"]
    assert rec.load(tmp_path / "model.mpk")["step"] == -1
    # how many kills landed inside a write depends on timing: reported, not asserted (the
    # deterministic case is the test below)
    print(f"kill -9 during saves: {kills} kills, {mid_write} landed mid-write, 0 temp files left")


def test_kill_9_inside_a_write_then_the_next_save_sweeps(tmp_path):
    proc = _spawn(tmp_path, "hold")
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "holding").exists() and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.02)
    finally:
        proc.kill()
        proc.communicate()
    (left,) = _temps(tmp_path)
    assert f"-{proc.pid}-" in left and not (tmp_path / "held.bin").exists()
    br.NamedMpkFileRecorder().record({"v": 3}, tmp_path / "next")
    assert _temps(tmp_path) == []
