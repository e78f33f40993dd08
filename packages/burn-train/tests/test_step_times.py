"""`LearnerBuilder.step_times()`: each training step's phases, timed on the real Learner.

The phases partition each epoch's wall time (they add up to the epoch's seconds), the
strategies mark forward/backward/optimizer inside their steps (so they are not lumped into one
phase), the summary drops the first epoch, and without the option nothing is timed. The
multi-process path (ranks, collectives) is checked through the data-parallel bench in
tests/test_dp_throughput.py."""

from __future__ import annotations

import tempfile

import pytest
import real_parts as parts
from burn_optim import AdamConfig
from burn_train.learner import PHASES

STEPS_PER_EPOCH = parts.N_TRAIN // parts.BATCH


def _fit(b):
    train, valid = parts.loaders()
    learner = b.build(parts.init_model(), AdamConfig().init(), 1e-2)
    learner.fit(train, valid)
    return learner


def _builder(devices, epochs=3):
    b = parts.builder(tempfile.mkdtemp(), epochs=epochs).num_epochs(epochs)
    return b.devices(devices)


@pytest.mark.parametrize("sync", [False, True])
def test_phases_partition_each_epoch_of_one_device(sync):
    learner = _fit(_builder([parts.AD.device()]).step_times(sync=sync))
    times = learner.step_times
    assert [e["epoch"] for e in times.epochs] == [1, 2, 3]
    for e in times.epochs:
        assert e["steps"] == STEPS_PER_EPOCH
        assert sum(e[p] for p in PHASES) == pytest.approx(e["seconds"], rel=1e-9)
    s = times.summary()
    assert (s["epochs"], s["steps"], s["synced"]) == (2, 2 * STEPS_PER_EPOCH, sync)
    assert s["seconds"] == pytest.approx(sum(e["seconds"] for e in times.epochs[1:]))
    assert sum(s["phases_ms"].values()) == pytest.approx(s["step_ms"], rel=1e-9)
    # The single-device step marks its own phases: each took time (an Mlp step on NdArray is
    # ~1 ms; a phase not marked would be 0 and its time would land in the next one).
    for phase in ("data", "forward", "backward", "optimizer", "metrics"):
        assert s["phases_ms"][phase] > 0, (phase, s)
    assert s["phases_ms"]["collective"] == 0.0  # one device: no collective


def test_two_devices_of_one_process_time_the_collective():
    devices = [parts.AD.device(), parts.AD.device()]
    s = _fit(_builder(devices).step_times()).step_times.summary(skip=0)
    assert s["steps"] == 3 * STEPS_PER_EPOCH
    for phase in ("forward", "backward", "collective", "optimizer"):
        assert s["phases_ms"][phase] > 0, (phase, s)


def test_off_by_default():
    learner = _fit(_builder([parts.AD.device()], epochs=1))
    assert learner.step_times is None
