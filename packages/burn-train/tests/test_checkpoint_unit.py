"""Checkpoints are one unit (issue 21): model, optimizer and scheduler of an epoch are committed
together by a marker written last; resume takes the newest complete one and says so; an
incomplete one is never loaded; a missing scheduler record is an error, not a restarted schedule."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import real_parts as parts
from burn_optim import AdamConfig
from burn_record import NamedMpkFileRecorder
from burn_train.checkpoint import CheckpointerError, CheckpointUnit, KeepLastNCheckpoints
from real_parts import builder, fit, params


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted 3-epoch run keeping every checkpoint: (dir, final params)."""
    root = tmp_path_factory.mktemp("ref")
    b = builder(root, epochs=3).with_checkpointing_strategy(KeepLastNCheckpoints(3))
    _, model = fit(b)
    return root, params(model)


def _copy_run(src, dst, epochs=(1, 2, 3)):
    ckpt = dst / "checkpoint"
    ckpt.mkdir(parents=True)
    for e in epochs:
        for name in [f"{k}-{e}.mpk" for k in ("model", "optim", "scheduler")] + [
            f"complete-{e}.json"
        ]:
            (ckpt / name).write_bytes((src / "checkpoint" / name).read_bytes())
    return ckpt


def _unit(ckpt):
    return CheckpointUnit(NamedMpkFileRecorder(), ckpt)


def test_every_saved_epoch_is_committed_by_its_marker(reference):
    root, _ = reference
    unit = _unit(root / "checkpoint")
    assert unit.complete_epochs() == [1, 2, 3] and unit.latest_complete() == 3
    text = (root / "checkpoint/complete-2.json").read_text()
    for name in ("model-2.mpk", "optim-2.mpk", "scheduler-2.mpk", "sha256"):
        assert name in text


def test_an_epoch_killed_mid_save_is_never_offered_or_loaded(reference, tmp_path, caplog):
    root, _ = reference
    ckpt = _copy_run(root, tmp_path / "run")
    # a kill after the model and optimizer records of epoch 3, before its scheduler and marker
    (ckpt / "complete-3.json").unlink()
    (ckpt / "scheduler-3.mpk").unlink()
    assert _unit(ckpt).complete_epochs() == [1, 2]
    with pytest.raises(CheckpointerError, match=r"checkpoint 3 .* incomplete .*no complete-3.json"):
        fit(builder(tmp_path / "run", epochs=3).checkpoint(3))
    # resume_latest() takes epoch 2, says so, and trains epoch 3 to the uninterrupted result
    with caplog.at_level(logging.INFO, logger="burn_train"):
        learner, model = fit(builder(tmp_path / "run", epochs=3).resume_latest())
    assert learner.resumed_from == 2 and learner.epochs_completed == 3
    assert "Resuming from checkpoint 2, the newest complete one (passed over incomplete: [3])" in (
        caplog.text
    )
    for key, value in params(model).items():
        np.testing.assert_array_equal(value, reference[1][key])
    # the re-saved epoch 3 is complete again
    assert _unit(ckpt).latest_complete() == 3


def test_a_missing_scheduler_record_is_an_error(reference, tmp_path):
    root, _ = reference
    ckpt = _copy_run(root, tmp_path / "run", epochs=(2,))
    (ckpt / "scheduler-2.mpk").unlink()
    with pytest.raises(CheckpointerError, match="scheduler record scheduler-2.mpk is missing"):
        fit(builder(tmp_path / "run", epochs=3).checkpoint(2))


def test_a_record_changed_after_commit_is_passed_over(reference, tmp_path):
    root, _ = reference
    ckpt = _copy_run(root, tmp_path / "run", epochs=(2, 3))
    data = bytearray((ckpt / "optim-3.mpk").read_bytes())
    data[-1] ^= 0xFF  # same size, other bytes
    (ckpt / "optim-3.mpk").write_bytes(bytes(data))
    unit = _unit(ckpt)
    assert unit.latest_complete() == 2
    with pytest.raises(CheckpointerError, match="optim-3.mpk does not match its SHA-256"):
        unit.require_complete(3)


def test_resume_latest_without_checkpoints_starts_at_epoch_1(tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="burn_train"):
        learner, _ = fit(builder(tmp_path, epochs=1).resume_latest())
    assert learner.resumed_from is None and learner.epochs_completed == 1
    assert "No complete checkpoint in" in caplog.text and "starting at epoch 1" in caplog.text


class _FailingRecorder(NamedMpkFileRecorder):
    """Fails when asked to write the optimizer record: a save that stops midway."""

    def record(self, item, path):
        if "optim-" in str(path):
            raise OSError("disk full")
        return super().record(item, path)


def test_a_failed_resave_uncommits_the_old_unit(reference, tmp_path):
    root, _ = reference
    ckpt = _copy_run(root, tmp_path / "run", epochs=(1, 2))
    unit = CheckpointUnit(_FailingRecorder(), ckpt)
    model = parts.init_model()
    with pytest.raises(OSError, match="disk full"):
        unit.save(2, model.into_record(), AdamConfig().init().to_record(), 5)
    # model-2 is new, optim-2 and scheduler-2 old: epoch 2 is un-committed, not offered any more
    assert not (ckpt / "complete-2.json").exists()
    assert _unit(ckpt).complete_epochs() == [1]


def test_leftovers_of_killed_saves_go_when_a_later_epoch_commits(reference, tmp_path):
    root, _ = reference
    ckpt = _copy_run(root, tmp_path / "run", epochs=(2,))
    (ckpt / "model-1.mpk").write_bytes((root / "checkpoint/model-1.mpk").read_bytes())
    unit = _unit(ckpt)
    assert unit.epochs_on_disk() == [1, 2] and unit.complete_epochs() == [2]
    unit.save(3, parts.init_model().into_record(), {}, None)
    assert sorted(p.name for p in ckpt.iterdir()) == sorted(
        [f"{k}-{e}.mpk" for k in ("model", "optim", "scheduler") for e in (2, 3)]
        + ["complete-2.json", "complete-3.json"]
    )
    assert unit.load(3, "scheduler") is None and unit.load(3, "optim") == {}
