"""A failing rank records its error in `$BURN_LAUNCH_DIR/rank-<r>.json`. It used to write through
the fixed name `rank-<r>.json.tmp`, following a symlink planted there; it now goes through
`burn_record.atomic_write` (random name, O_EXCL, rename)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_the_failure_record_does_not_follow_a_planted_symlink(tmp_path):
    records = tmp_path / "records"
    records.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (records / "rank-1.json.tmp").symlink_to(victim)
    script = tmp_path / "fail.py"
    script.write_text("raise RuntimeError('boom on rank 1')\n")
    env = {**os.environ, "BURN_LAUNCH_DIR": str(records), "BURN_RANK": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "burn_train._rank_main", str(script)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert run.returncode != 0 and "boom on rank 1" in run.stderr
    assert victim.read_text() == "precious\n"
    record = json.loads((records / "rank-1.json").read_text())
    assert record["rank"] == 1 and record["type"] == "RuntimeError"
