"""End to end with real components only: a burn_nn MLP on `Autodiff(NdArray())`, burn_optim's
Adam and StepLr scheduler, burn_dataset loaders (train shuffled) and a burn_record checkpointer."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import real_parts as parts
from burn_optim import AdamConfig
from burn_record import CompactRecorder, NamedMpkFileRecorder
from burn_train import LearnerSummary
from burn_train.checkpoint import KeepLastNCheckpoints
from real_parts import BATCH, N_TRAIN, adam_steps, builder, init_model, params

SHUFFLE = 7  # the train loader's shuffle seed (a resumed run must replay the same order)


def fit(b):
    """`real_parts.fit` with the shuffled train loader."""
    return parts.fit(b, shuffle=SHUFFLE)


def test_real_components_three_epochs_and_shuffled_resume(tmp_path):
    learner, full = fit(builder(tmp_path / "full", recorder=CompactRecorder()))
    root = tmp_path / "full"
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    ext = CompactRecorder().file_path("x").name[1:]  # ".mpk.gz"
    expected = ["curves.csv", "curves.png", "experiment.log"]  # curves: _curves.py
    kinds = ("model", "optim", "scheduler")
    expected += [f"checkpoint/{k}-{e}{ext}" for k in kinds for e in (2, 3)]
    expected += [f"checkpoint/complete-{e}.json" for e in (2, 3)]
    for split, names in (
        ("train", ["Accuracy", "Learning Rate", "Loss"]),
        ("valid", ["Accuracy", "Loss"]),
    ):
        expected += [f"{split}/epoch-{e}/{n}.log" for e in (1, 2, 3) for n in names]
    # default strategy: keep the last 2 + the best valid loss (epoch 3 here: it keeps improving)
    assert files == sorted(expected)
    for e in (1, 2, 3):
        acc = (root / f"train/epoch-{e}/Accuracy.log").read_text().splitlines()
        assert len(acc) == N_TRAIN // BATCH and all(line.endswith(f",{BATCH}") for line in acc)
        for split, name, n in (("train", "Loss", 6), ("train", "Learning Rate", 6)) + (
            ("valid", "Accuracy", 3),
            ("valid", "Loss", 3),
        ):
            assert len((root / f"{split}/epoch-{e}/{name}.log").read_text().splitlines()) == n
    lr_log = (root / "train/epoch-2/Learning Rate.log").read_text()
    lrs = [float(x.split(",")[0]) for x in lr_log.split()]
    assert lrs == [1e-2] * 6  # StepLr(2e-2, step 6, gamma 0.5): second epoch at half
    log = (root / "experiment.log").read_text()
    assert "Saving checkpoint 3" in log
    summary = LearnerSummary(root, ["Accuracy", "Loss"])
    epoch_means = lambda ms: {m.name: [v for _, v in m.entries] for m in ms}  # noqa: E731
    train, valid = epoch_means(summary.train), epoch_means(summary.valid)
    assert train["Accuracy"][0] < train["Accuracy"][1] < train["Accuracy"][2]  # it learns
    assert train["Loss"][0] > train["Loss"][1] > train["Loss"][2]
    assert valid["Accuracy"][2] > valid["Accuracy"][0] and valid["Accuracy"][2] > 85.0
    assert learner.epochs_completed == 3

    # resume: epochs 1-2, then a new learner from checkpoint 2 runs epoch 3 (shuffled loader);
    # full precision records (CompactRecorder stores half precision, checked below)
    full_precision = NamedMpkFileRecorder()
    _, first = fit(builder(tmp_path / "resume", epochs=2, recorder=full_precision))
    learner, resumed = fit(
        builder(tmp_path / "resume", epochs=3, recorder=full_precision).checkpoint(2)
    )
    assert learner.scheduler.iter_idx == 3 * N_TRAIN // BATCH - 1  # restored, then 6 steps
    assert adam_steps(learner.optim) == 3 * N_TRAIN // BATCH  # Adam's state restored too
    p_full, p_first, p_resumed = params(full), params(first), params(resumed)
    assert p_full.keys() == p_resumed.keys() and len(p_full) == 4
    for key in p_full:
        np.testing.assert_array_equal(p_resumed[key], p_full[key])
        assert not np.array_equal(p_first[key], p_full[key])
    for e in (1, 2, 3):
        assert (tmp_path / f"resume/train/epoch-{e}/Loss.log").read_text() == (
            root / f"train/epoch-{e}/Loss.log"
        ).read_text()

    # CompactRecorder (half precision, as Burn's) resumes close to, not exactly at, the full run
    compact = tmp_path / "compact/checkpoint"
    compact.mkdir(parents=True)
    for name in [f"{k}-2{ext}" for k in ("model", "optim", "scheduler")] + ["complete-2.json"]:
        (compact / name).write_bytes((root / f"checkpoint/{name}").read_bytes())
    _, approx = fit(builder(tmp_path / "compact", recorder=CompactRecorder()).checkpoint(2))
    for key, value in params(approx).items():
        np.testing.assert_allclose(value, p_full[key], atol=2e-3)


SIGINT_CHILD = str(Path(__file__).with_name("sigint_child.py"))


def test_sigint_mid_epoch_leaves_every_checkpoint_loadable(tmp_path):
    """A real SIGINT from outside lands mid-epoch 3 of a 10-epoch run in another process (which
    holds at epoch 3 iteration 2 until the signal arrives): it stops gracefully (exit 0), and every
    checkpoint file it wrote loads (model, optimizer, scheduler), holds what an uninterrupted run
    holds at that epoch, and resumes to the uninterrupted run."""
    run = tmp_path / "run"
    run.mkdir()
    proc = subprocess.Popen(
        [sys.executable, SIGINT_CHILD, str(run)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # the signal goes to the child only
    )
    try:
        marker = run / "holding"
        deadline = time.monotonic() + 300  # generous: only a broken run takes this long
        while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if not marker.exists():
            proc.kill()
            raise AssertionError(f"epoch 3 iteration 2 never reached: {proc.communicate()}")
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err.decode()
    assert (run / "returned.txt").read_text() == "completed=2 interrupted=True model=Mlp\n"
    text = (run / "experiment.log").read_text()
    assert "Training interrupted at epoch 3 iteration 2: interrupted (Ctrl-C)" in text, text
    assert not (run / "valid/epoch-3").exists()

    # exactly the checkpoints of the completed epochs, no partial or temporary files
    ckpt = run / "checkpoint"
    kinds = ("model", "optim", "scheduler")
    assert sorted(p.name for p in ckpt.iterdir()) == sorted(
        [f"{k}-{e}.mpk" for k in kinds for e in (1, 2)] + ["complete-1.json", "complete-2.json"]
    )
    # the uninterrupted reference (all its checkpoints kept)
    ref = tmp_path / "ref"
    recorder = NamedMpkFileRecorder()
    _, full = fit(
        builder(ref, epochs=3, recorder=recorder).with_checkpointing_strategy(
            KeepLastNCheckpoints(3)
        )
    )
    # every file written loads, each into its own kind of object
    for path in sorted(ckpt.glob("*.mpk")):
        kind, epoch = path.stem.split("-")
        epoch = int(epoch)
        if kind == "model":
            proto = init_model(seed=1)
            model = proto.load_record(recorder.load(path, target=proto.into_record()))
            expected = init_model(seed=1)
            expected = expected.load_record(
                recorder.load(ref / f"checkpoint/model-{epoch}.mpk", target=expected.into_record())
            )
            got, want, before = params(model), params(expected), params(proto)
            assert got.keys() == want.keys() and len(got) == 4
            for key in got:
                np.testing.assert_array_equal(got[key], want[key])
                assert not np.array_equal(got[key], before[key])  # it did load something
        elif kind == "optim":
            record = recorder.load(path)
            assert len(record) == 4  # one Adam state per parameter
            optim = AdamConfig().init().load_record(record)
            assert adam_steps(optim) == epoch * N_TRAIN // BATCH
        else:
            sched = parts.scheduler()
            sched = sched.load_record(recorder.load(path)) or sched
            assert sched.iter_idx == epoch * N_TRAIN // BATCH - 1
    # and the last one resumes to exactly the uninterrupted run
    learner, resumed = fit(builder(run, epochs=3, recorder=recorder).checkpoint(2))
    assert learner.epochs_completed == 3 and not learner.interrupted
    p_full, p_resumed = params(full), params(resumed)
    for key in p_full:
        np.testing.assert_array_equal(p_resumed[key], p_full[key])
