"""kill -9 during training runs (issue 21): a process training with checkpoints is killed at
random moments, half of them right after it starts saving a checkpoint, then rerun with
`resume_latest()` until a run completes; repeated over fresh artifact dirs.

After every kill: every checkpoint the learner offers for resume is complete, loads, and holds
exactly what an uninterrupted run holds at that epoch; every temporary file left belongs to a
killed process. After each completed run: no temporary file and no incomplete checkpoint is left,
and the final model equals the uninterrupted run's bit for bit.

8 killed runs by default (about a minute on a loaded 2-core machine); `BURN_KILL9_FULL=1` runs 40.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import kill9_train_child as child
import numpy as np
import pytest
import real_parts as parts
from burn_optim import AdamConfig
from burn_record import NamedMpkFileRecorder
from burn_train.checkpoint import CheckpointUnit

EPOCHS = 4
CHILD = str(Path(__file__).with_name("kill9_train_child.py"))
TEMP = re.compile(r"^\..+\.[0-9a-f]{8}-(\d+)-[0-9a-f]{12}\.tmp$")


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted run, every epoch's checkpoint kept: (checkpoint dir, final params)."""
    root = tmp_path_factory.mktemp("reference")
    _, model = parts.fit(
        child.run_builder(root, EPOCHS, keep=EPOCHS), child.model(), shuffle=child.SHUFFLE
    )
    return root / "checkpoint", parts.params(model)


def _load_unit(unit: CheckpointUnit, epoch: int):
    proto = child.model()
    model = proto.load_record(unit.load(epoch, "model", target=proto.into_record()))
    optim = AdamConfig().init().load_record(unit.load(epoch, "optim"))
    sched = parts.scheduler()
    sched = sched.load_record(unit.load(epoch, "scheduler")) or sched
    return parts.params(model), parts.adam_steps(optim), sched.iter_idx


def _check_offered(ckpt: Path, ref_ckpt: Path, ref_cache: dict) -> list[int]:
    unit = CheckpointUnit(NamedMpkFileRecorder(), ckpt)
    offered = unit.complete_epochs()
    latest = unit.latest_complete()
    assert latest == (offered[-1] if offered else None)
    for epoch in offered:
        unit.require_complete(epoch)
        got = _load_unit(unit, epoch)
        if epoch not in ref_cache:
            ref_cache[epoch] = _load_unit(CheckpointUnit(NamedMpkFileRecorder(), ref_ckpt), epoch)
        want = ref_cache[epoch]
        assert got[1:] == want[1:] == (epoch * 6, epoch * 6 - 1), (epoch, got[1:], want[1:])
        for key in want[0]:
            np.testing.assert_array_equal(got[0][key], want[0][key])
    return offered


def _temps(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".tmp")]


def test_kill_9_during_training_runs(tmp_path, reference):
    ref_ckpt, ref_final = reference
    kills_wanted = 40 if os.environ.get("BURN_KILL9_FULL") == "1" else 8
    rng = random.Random(2121)
    ref_cache: dict = {}
    killed: set[int] = set()
    stats = {"kills": 0, "after_save": 0, "rounds": 0, "temps_seen": 0, "incomplete_seen": 0}
    while stats["kills"] < kills_wanted:
        stats["rounds"] += 1
        run = tmp_path / f"round-{stats['rounds']}"
        completed = False
        while not completed:
            target_save = rng.random() < 0.5 and stats["kills"] < kills_wanted
            kill = stats["kills"] < kills_wanted
            proc = subprocess.Popen(
                [sys.executable, CHILD, str(run), str(EPOCHS)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            completed = False
            try:
                latest = CheckpointUnit(
                    NamedMpkFileRecorder(), run / "checkpoint"
                ).latest_complete()
                remaining = EPOCHS - (latest or 0)
                completed = _drive(proc, kill, target_save, rng, remaining)
                if completed:
                    proc.wait(timeout=120)  # it printed "done": let it exit by itself
            finally:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
                proc.stdout.close()
                err = proc.stderr.read()
                proc.stderr.close()
            if completed:
                assert proc.returncode == 0, err
                continue
            assert proc.returncode == -9, (proc.returncode, err)
            killed.add(proc.pid)
            stats["kills"] += 1
            stats["after_save"] += target_save
            temps = _temps(run)
            stats["temps_seen"] += len(temps)
            for p in temps:
                m = TEMP.match(p.name)
                assert m and int(m[1]) in killed, p
            offered = _check_offered(run / "checkpoint", ref_ckpt, ref_cache)
            on_disk = CheckpointUnit(NamedMpkFileRecorder(), run / "checkpoint").epochs_on_disk()
            stats["incomplete_seen"] += len(set(on_disk) - set(offered))
        # the round's run completed: nothing partial left, and it is the uninterrupted result
        assert _temps(run) == []
        unit = CheckpointUnit(NamedMpkFileRecorder(), run / "checkpoint")
        offered = _check_offered(run / "checkpoint", ref_ckpt, ref_cache)
        # no incomplete records left; the last two epochs kept (an older complete one may stay
        # too: a kill between committing epoch N and deleting N-2 leaves N-2 to no later delete)
        assert unit.epochs_on_disk() == offered and offered[-2:] == [EPOCHS - 1, EPOCHS]
        final, _, _ = _load_unit(unit, EPOCHS)
        for key, value in ref_final.items():
            np.testing.assert_array_equal(final[key], value)
    print(
        f"kill -9 during training: {stats['kills']} kills over {stats['rounds']} rounds "
        f"({stats['after_save']} right after 'Saving checkpoint'), {stats['temps_seen']} temp "
        f"files and {stats['incomplete_seen']} incomplete checkpoints seen after kills, none "
        "offered; every round resumed to the uninterrupted model"
    )


def _drive(proc, kill: bool, target_save: bool, rng: random.Random, remaining: int) -> bool:
    """Read the child's lines; kill it (if `kill`) just after one of the `remaining` checkpoint
    saves starts, or just after any random line of its log (training, validation, saving or
    deleting: the kill lands in every phase, however fast the machine). True when it completed."""
    if target_save:
        wanted = lambda line: line.startswith("Saving checkpoint")
        skip, delay = rng.randrange(0, max(remaining, 1)), rng.uniform(0.0, 0.03)
    else:
        wanted = lambda line: True
        skip, delay = rng.randrange(0, 4 * max(remaining, 1) + 3), rng.uniform(0.0, 0.1)
    for line in proc.stdout:
        line = line.strip()
        if line.startswith("done"):
            return True
        if kill and wanted(line):
            if skip == 0:
                time.sleep(delay)
                proc.kill()
                proc.wait()
                # it may have finished during the delay (the line was its last): then it completed
                return proc.returncode == 0 and any(x.startswith("done") for x in proc.stdout)
            skip -= 1
    return False
