"""End to end with real components only: a burn_nn MLP on `Autodiff(NdArray())`, burn_optim's
Adam and StepLr scheduler, burn_dataset loaders (train shuffled) and a burn_record checkpointer."""

import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from burn_autodiff import Autodiff
from burn_dataset import DataLoaderBuilder, InMemDataset
from burn_ndarray import NdArray
from burn_nn import LinearConfig, Module, Relu
from burn_nn.loss import CrossEntropyLossConfig
from burn_optim import AdamConfig
from burn_optim.lr_scheduler import StepLrSchedulerConfig
from burn_record import CompactRecorder, NamedMpkFileRecorder
from burn_train import ClassificationOutput, LearnerBuilder, LearnerSummary, TrainOutput
from burn_train.checkpoint import KeepLastNCheckpoints
from burn_train.metric import AccuracyMetric, LearningRateMetric, LossMetric
from burn_train.renderer import CliMetricsRenderer
from real_parts import Batcher, make_items

INNER = NdArray()
AD = Autodiff(INNER)
N_CLASSES, D_IN, D_HIDDEN = 3, 4, 16
N_TRAIN, N_VALID, BATCH = 96, 48, 16


def loaders(seed=7):
    train = DataLoaderBuilder(Batcher()).batch_size(BATCH).shuffle(seed).set_device(AD.device())
    valid = DataLoaderBuilder(Batcher()).batch_size(BATCH).set_device(INNER.device())
    return (
        train.build(InMemDataset(make_items(N_TRAIN, 0))),
        valid.build(InMemDataset(make_items(N_VALID, 1))),
    )


class Mlp(Module):
    linear1: Module
    linear2: Module
    activation: Relu = Relu()

    def forward(self, x):
        return self.linear2.forward(self.activation.forward(self.linear1.forward(x)))

    def forward_classification(self, batch):
        logits = self.forward(batch.inputs)
        loss = CrossEntropyLossConfig().init(logits.device()).forward(logits, batch.targets)
        return ClassificationOutput(loss, logits, batch.targets)

    def train_step(self, batch):
        item = self.forward_classification(batch)
        return TrainOutput(self, item.loss.backward(), item)

    def valid_step(self, batch):
        return self.forward_classification(batch)


def init_model(seed=0):
    AD.seed(seed)
    device = AD.device()
    return Mlp(
        linear1=LinearConfig(D_IN, D_HIDDEN).init(device),
        linear2=LinearConfig(D_HIDDEN, N_CLASSES).init(device),
    )


def builder(path, epochs=3, recorder=None):
    return (
        LearnerBuilder(path)
        .metric_train_numeric(AccuracyMetric())
        .metric_valid_numeric(AccuracyMetric())
        .metric_train_numeric(LossMetric())
        .metric_valid_numeric(LossMetric())
        .metric_train(LearningRateMetric())
        .with_file_checkpointer(recorder or CompactRecorder())
        .renderer(CliMetricsRenderer(io.StringIO(), interval=0))
        .devices([AD.device()])
        .num_epochs(epochs)
    )


def fit(b):
    train, valid = loaders()
    sched = StepLrSchedulerConfig(2e-2, 6).with_gamma(0.5).init()
    learner = b.build(init_model(), AdamConfig().init(), sched)
    return learner, learner.fit(train, valid)


def params(model):
    return {path: p.val().numpy().copy() for path, p in model.named_parameters()}


def test_real_components_three_epochs_and_shuffled_resume(tmp_path):
    learner, full = fit(builder(tmp_path / "full"))
    root = tmp_path / "full"
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    ext = CompactRecorder().file_path("x").name[1:]  # ".mpk.gz"
    expected = ["experiment.log"]
    kinds = ("model", "optim", "scheduler")
    expected += [f"checkpoint/{k}-{e}{ext}" for k in kinds for e in (2, 3)]
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
    for k in ("model", "optim", "scheduler"):
        (compact / f"{k}-2{ext}").write_bytes((root / f"checkpoint/{k}-2{ext}").read_bytes())
    _, approx = fit(builder(tmp_path / "compact", epochs=3).checkpoint(2))
    for key, value in params(approx).items():
        np.testing.assert_allclose(value, p_full[key], atol=2e-3)


SIGINT_CHILD = str(Path(__file__).with_name("sigint_child.py"))


def test_sigint_mid_epoch_leaves_every_checkpoint_loadable(tmp_path):
    """A real SIGINT from outside lands mid-epoch 3 of a 10-epoch run in another process: it stops
    gracefully (exit 0), and every checkpoint file it wrote loads (model, optimizer, scheduler),
    holds what an uninterrupted run holds at that epoch, and resumes to the uninterrupted run."""
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
        log = run / "experiment.log"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if log.exists() and "Executing training step for epoch 3" in log.read_text():
                break
            time.sleep(0.02)
        else:
            raise AssertionError(f"epoch 3 never started: {proc.communicate(timeout=30)}")
        time.sleep(0.3)  # a couple of the 6 iterations of 0.15 s
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err.decode()
    assert (run / "returned.txt").read_text() == "completed=2 interrupted=True model=Mlp\n"
    text = log.read_text()
    m = re.search(r"Training interrupted at epoch 3 iteration (\d+): interrupted \(Ctrl-C\)", text)
    assert m and 1 <= int(m.group(1)) < N_TRAIN // BATCH, text  # mid-epoch
    assert not (run / "valid/epoch-3").exists()

    # exactly the checkpoints of the completed epochs, no partial or temporary files
    ckpt = run / "checkpoint"
    kinds = ("model", "optim", "scheduler")
    assert sorted(p.name for p in ckpt.iterdir()) == sorted(
        f"{k}-{e}.mpk" for k in kinds for e in (1, 2)
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
    for path in sorted(ckpt.iterdir()):
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
            AdamConfig().init().load_record(record)
        else:
            sched = StepLrSchedulerConfig(2e-2, 6).with_gamma(0.5).init()
            sched = sched.load_record(recorder.load(path)) or sched
            assert sched.iter_idx == epoch * N_TRAIN // BATCH - 1
    # and the last one resumes to exactly the uninterrupted run
    learner, resumed = fit(builder(run, epochs=3, recorder=recorder).checkpoint(2))
    assert learner.epochs_completed == 3 and not learner.interrupted
    p_full, p_resumed = params(full), params(resumed)
    for key in p_full:
        np.testing.assert_array_equal(p_resumed[key], p_full[key])
