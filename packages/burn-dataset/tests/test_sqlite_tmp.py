"""The writer's temporary database: built in a private folder (random name, mode 0700) beside
the target, never at a name another user could plant a symlink at. Before, it was
`<file>.<pid>.<8 hex>.tmp` in the target's folder, opened by SQLite without O_EXCL: whoever
guessed the name had the writer write a whole database through their symlink."""

from __future__ import annotations

import os
import stat
import uuid

import pytest
from burn_dataset import SqliteDataset, SqliteDatasetWriter


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_symlink_planted_at_the_old_temp_name_is_not_followed(tmp_path, monkeypatch):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    # The attacker's guess of the old name: the writer's pid and uuid4's first 8 hex digits.
    fixed = uuid.UUID(int=0xABCDEF12 << 96)
    monkeypatch.setattr(uuid, "uuid4", lambda: fixed)
    db = tmp_path / "d.db"
    (tmp_path / f"d.db.{os.getpid()}.abcdef12.tmp").symlink_to(victim)
    with SqliteDatasetWriter(db) as writer:
        writer.write("train", {"x": 1})
    assert victim.read_text() == "precious\n"
    assert SqliteDataset.from_db_file(db, "train").get(0) == {"x": 1}


def test_the_temporary_database_lives_in_a_private_folder(tmp_path):
    db = tmp_path / "d.db"
    writer = SqliteDatasetWriter(db)
    folder = writer._tmp_file.parent
    assert folder != tmp_path and folder.parent == tmp_path
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    writer.write("train", {"x": 1})
    writer.set_completed()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.db"]


def test_abort_leaves_nothing_behind(tmp_path):
    writer = SqliteDatasetWriter(tmp_path / "d.db")
    writer.write("train", {"x": 1})
    writer.abort()
    assert list(tmp_path.iterdir()) == []
