"""End to end: a small burn_nn classifier on `Autodiff(NdArray())` trained with burn_optim's Adam
and StepLr through LearnerBuilder (artifacts, logs, summary, checkpoint strategies, early stopping,
interruption, gradient accumulation). The parts are shared with the other tests: `real_parts`."""

import io
import os
import signal
import threading

import pytest
from burn_optim import AdamConfig
from burn_train import (
    Aggregate,
    ClassificationOutput,
    Direction,
    LearnerBuilder,
    LearnerSummary,
    MetricEarlyStoppingStrategy,
    Split,
    StoppingCondition,
)
from burn_train.checkpoint import KeepLastNCheckpoints
from burn_train.logger import InMemoryMetricLogger
from burn_train.metric import Metric, MetricEntry
from burn_train.renderer import CliMetricsRenderer
from real_parts import Mlp, adam_steps, builder, fit, init_model


class _Backends(Metric):
    """Records, for every step output it sees, whether the logits are autodiff tensors."""

    Input = ClassificationOutput

    def __init__(self):
        self.autodiff: list[bool] = []

    def name(self):
        return "Backends"

    def update(self, item, metadata):
        self.autodiff.append(item.output.device.backend.is_autodiff)
        return MetricEntry("Backends", "", "0,1")

    def clear(self):
        pass


def test_three_epochs_artifacts_logs_and_summary(tmp_path):
    out = io.StringIO()
    train_backends, valid_backends = _Backends(), _Backends()
    b = builder(tmp_path, out=out).summary()
    learner, model = fit(b.metric_train(train_backends).metric_valid(valid_backends))
    # the model learned: the mean validation loss falls every epoch, the accuracy ends high
    later = LearnerSummary(tmp_path, ["Accuracy", "Loss"])
    valid = {m.name: [v for _, v in m.entries] for m in later.valid}
    assert valid["Loss"][0] > valid["Loss"][1] > valid["Loss"][2]
    assert valid["Accuracy"][-1] > 85.0
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    expected = ["curves.csv", "curves.png", "experiment.log"]  # curves: _curves.py
    # default strategy: keep the last 2 + the best valid loss (epoch 3, as checked above)
    expected += [f"checkpoint/{name}" for name in _ckpt(2, 3)]
    for split, names in (
        ("train", ["Accuracy", "Backends", "Learning Rate", "Loss"]),
        ("valid", ["Accuracy", "Backends", "Loss"]),
    ):
        expected += [f"{split}/epoch-{e}/{n}.log" for e in (1, 2, 3) for n in names]
    assert files == sorted(expected)
    # one value per iteration: 96 items / 16 = 6 train iterations, 48 / 16 = 3 valid iterations
    for e in (1, 2, 3):
        acc = (tmp_path / f"train/epoch-{e}/Accuracy.log").read_text().splitlines()
        assert len(acc) == 6 and all(line.endswith(",16") for line in acc)
        assert len((tmp_path / f"valid/epoch-{e}/Loss.log").read_text().splitlines()) == 3
    lrs = lambda e: [  # noqa: E731
        float(x.split(",")[0])
        for x in (tmp_path / f"train/epoch-{e}/Learning Rate.log").read_text().split()
    ]
    assert lrs(1) + lrs(2) + lrs(3) == [2e-2] * 6 + [1e-2] * 6 + [5e-3] * 6  # StepLr, gamma 0.5
    log = (tmp_path / "experiment.log").read_text()
    assert "Executing training step for epoch 3" in log and "Saving checkpoint 3" in log
    text = out.getvalue()
    assert "[train] epoch 3/3 iter 6 | 96/96 items (100%) | Accuracy: epoch" in text
    assert "Learner Summary" in text and "| Valid | Loss" in text
    # the summary is readable from the files later, with the same numbers
    cells = lambda line: [c.strip() for c in line.split("|")]  # noqa: E731
    printed = next(cells(x) for x in text.splitlines() if x.startswith("| Valid | Loss"))
    assert later.epochs == 3 and cells(str(later).splitlines()[-1]) == printed
    assert learner.epochs_completed == 3 and not learner.interrupted
    assert isinstance(model, Mlp) and adam_steps(learner.optim) == 18  # 3 epochs x 6 steps
    # training ran on the autodiff model, validation on model.valid() (the inner backend)
    assert train_backends.autodiff == [True] * 18 and valid_backends.autodiff == [False] * 9


class _ListCheckpoints(Metric):
    """Records the checkpoint files on disk at the first training iteration of every epoch."""

    Input = None

    def __init__(self, directory):
        self.directory, self.seen = directory, {}

    def update(self, item, metadata):
        if metadata.iteration == 1:
            files = self.directory.glob("*") if self.directory.exists() else []
            self.seen[metadata.epoch] = sorted(p.name for p in files)
        return MetricEntry("ListCheckpoints", "", "0,1")

    def clear(self):
        pass


def _ckpt(*epochs):
    """The files of complete checkpoints: three records and the marker written last."""
    kinds = ("model", "optim", "scheduler")
    return sorted(
        [f"{k}-{e}.mpk" for k in kinds for e in epochs] + [f"complete-{e}.json" for e in epochs]
    )


def test_checkpoint_strategies_keep_last_and_best(tmp_path):
    # keep last 2 over 4 epochs: real files are written, then the oldest is deleted
    spy = _ListCheckpoints(tmp_path / "last/checkpoint")
    b = builder(tmp_path / "last", epochs=4).metric_train(spy)
    fit(b.with_checkpointing_strategy(KeepLastNCheckpoints(2)))
    assert spy.seen == {1: [], 2: _ckpt(1), 3: _ckpt(1, 2), 4: _ckpt(2, 3)}
    assert sorted(p.name for p in (tmp_path / "last/checkpoint").iterdir()) == _ckpt(3, 4)
    log = (tmp_path / "last/experiment.log").read_text()
    assert "Deleting checkpoint 1" in log and "Deleting checkpoint 2" in log
    assert "Deleting checkpoint 3" not in log
    fit(builder(tmp_path / "last1").with_checkpointing_strategy(KeepLastNCheckpoints(1)))
    assert sorted(p.name for p in (tmp_path / "last1/checkpoint").iterdir()) == _ckpt(3)
    # default: last 2 + best validation loss; a constant lr of 0.2 overshoots after epoch 1, so
    # the best epoch (1) is not among the last two and its checkpoint must survive
    b = builder(tmp_path / "best", epochs=3).metric_loggers(mem := InMemoryMetricLogger())
    fit(b, sched=0.2)
    from burn_train.metric.store import EventStore

    store = EventStore([mem])
    best = store.find_epoch("Loss", Aggregate.MEAN, Direction.LOWEST, Split.VALID, range(1, 4))
    kept = {int(p.stem.split("-")[1]) for p in (tmp_path / "best/checkpoint").glob("model-*")}
    assert best == 1 and kept == {1, 2, 3}


class _FakeLoss(Metric):
    """A validation 'loss' that gets worse after epoch 1: early stopping must trigger."""

    Input = None

    def __init__(self):
        self.epoch_values = {1: 1.0, 2: 2.0, 3: 3.0, 4: 4.0, 5: 5.0}

    def name(self):
        return "Fake"

    def update(self, item, metadata):
        return MetricEntry("Fake", "", f"{self.epoch_values[metadata.epoch]},1")

    def clear(self):
        pass


def test_early_stopping(tmp_path):
    stop = MetricEarlyStoppingStrategy(
        "Fake",
        Aggregate.MEAN,
        Direction.LOWEST,
        Split.VALID,
        StoppingCondition.no_improvement_since(2),
    )
    learner, _ = fit(builder(tmp_path, epochs=5).metric_valid(_FakeLoss()).early_stopping(stop))
    assert learner.stopped_early and learner.epochs_completed == 3
    assert not (tmp_path / "train/epoch-4").exists()
    assert "early stopping at epoch 3" in (tmp_path / "experiment.log").read_text()


class _StopAt(Metric):
    """Calls a function at a given (epoch, iteration): simulates a user pressing stop."""

    Input = None

    def __init__(self, epoch, iteration, action):
        self.at, self.action = (epoch, iteration), action

    def update(self, item, metadata):
        if (metadata.epoch, metadata.iteration) == self.at:
            self.action()
        return MetricEntry("StopAt", "", "0,1")

    def clear(self):
        pass


def test_graceful_interrupt_returns_model_and_keeps_checkpoints(tmp_path):
    b = builder(tmp_path)
    interrupter = b.interrupter()
    learner, model = fit(b.metric_train(_StopAt(2, 3, lambda: interrupter.stop("user"))))
    assert learner.interrupted and learner.epochs_completed == 1
    assert isinstance(model, Mlp) and adam_steps(learner.optim) == 9  # 6 + 3 steps
    assert len((tmp_path / "train/epoch-2/Loss.log").read_text().splitlines()) == 3
    assert not (tmp_path / "valid/epoch-2").exists()
    assert sorted(p.name for p in (tmp_path / "checkpoint").glob("model-*")) == ["model-1.mpk"]
    assert "Training stopped: user" in (tmp_path / "experiment.log").read_text()


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals")
def test_ctrl_c_stops_gracefully(tmp_path):
    kill = lambda: os.kill(os.getpid(), signal.SIGINT)  # noqa: E731
    before = signal.getsignal(signal.SIGINT)  # SIG_IGN when pytest runs as a background job
    learner, model = fit(builder(tmp_path).metric_train(_StopAt(1, 2, kill)))
    assert learner.interrupted and adam_steps(learner.optim) == 2 and isinstance(model, Mlp)
    assert signal.getsignal(signal.SIGINT) is before  # handler restored


def test_grads_accumulation_steps_every_n(tmp_path):
    learner, _ = fit(builder(tmp_path, epochs=1).grads_accumulation(3))
    assert adam_steps(learner.optim) == 2  # 6 iterations / 3


def test_build_rejects_non_numeric_plot_metric(tmp_path):
    b = (
        LearnerBuilder(tmp_path)
        .metric_train_numeric(_FakeLoss())
        .renderer(CliMetricsRenderer(io.StringIO()))
    )
    with pytest.raises(TypeError, match="not numeric"):
        b.build(init_model(), AdamConfig().init(), 0.1)
