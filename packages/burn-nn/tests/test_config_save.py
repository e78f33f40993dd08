"""F24: `Config.save` wrote through the fixed name `<file>.tmp`, so a symlink planted there made it
overwrite the symlink's target (and left `<file>` a symlink). It now writes through
`burn_record.atomic_write`: a random name created with O_EXCL, then a rename."""

from __future__ import annotations

import os

import pytest

from burn_nn import LinearConfig


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_symlink_planted_at_the_old_temp_name_is_not_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    target = tmp_path / "cfg.json"
    planted = tmp_path / "cfg.json.tmp"
    planted.symlink_to(victim)
    LinearConfig(3, 4).save(target)
    assert victim.read_text() == "precious\n"
    assert not target.is_symlink() and LinearConfig.load(target) == LinearConfig(3, 4)
    assert planted.is_symlink() and os.readlink(planted) == str(victim)  # left alone


def test_concurrent_saves_share_no_temp_file_and_leave_none(tmp_path):
    target = tmp_path / "cfg.json"
    for d in range(1, 6):
        LinearConfig(d, 4).save(target)
    assert LinearConfig.load(target) == LinearConfig(5, 4)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cfg.json"]
