"""Real components shared by the learner, dashboard and end-to-end tests (and their child
processes): a 3-class blob data set with its batcher and burn_dataset loaders, a burn_nn MLP
classifier trained on `Autodiff(NdArray())`, burn_optim's Adam and StepLr, a LearnerBuilder with
the usual metrics, and `HoldUntilStopped`, which makes the point where a test stops training
deterministic.

Example:
    >>> import tempfile
    >>> learner, model = fit(builder(tempfile.mkdtemp(), epochs=1))
    >>> learner.epochs_completed, adam_steps(learner.optim), type(model).__name__
    (1, 6, 'Mlp')
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from burn_autodiff import Autodiff
from burn_dataset import DataLoaderBuilder, InMemDataset
from burn_ndarray import NdArray
from burn_nn import LinearConfig, Module, Relu
from burn_nn.loss import CrossEntropyLossConfig
from burn_optim import AdamConfig
from burn_optim.lr_scheduler import StepLrSchedulerConfig
from burn_record import NamedMpkFileRecorder
from burn_tensor import Tensor
from burn_train import ClassificationOutput, LearnerBuilder, TrainOutput
from burn_train.metric import (
    AccuracyMetric,
    LearningRateMetric,
    LossMetric,
    Metric,
    MetricEntry,
)
from burn_train.renderer import CliMetricsRenderer

INNER = NdArray()
AD = Autodiff(INNER)
N_CLASSES, D_IN, D_HIDDEN = 3, 4, 16
N_TRAIN, N_VALID, BATCH = 96, 48, 16  # 6 train and 3 valid iterations per epoch
CENTERS = np.array([[2, 0, 0, 1], [0, 2, 0, -1], [0, 0, 2, 0]], dtype=np.float64)


def make_items(n: int, seed: int, dtype=np.float32) -> list[tuple[np.ndarray, int]]:
    """n items (features [D_IN], label): class centres plus unit Gaussian noise, fixed by seed."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, N_CLASSES, n)
    xs = (CENTERS[labels] + rng.normal(0, 1.0, (n, D_IN))).astype(dtype)
    return [(xs[i], int(labels[i])) for i in range(n)]


@dataclass
class Batch:
    inputs: Tensor  # [batch, D_IN] Float
    targets: Tensor  # [batch] Int


class Batcher:
    def __init__(self, dtype=np.float32):
        self.dtype = dtype

    def batch(self, items, device) -> Batch:
        x = np.stack([i[0] for i in items]).astype(self.dtype)
        y = np.array([i[1] for i in items], dtype=np.int64)
        return Batch(Tensor.from_data(x, device), Tensor.from_data(y, device))


def loaders(shuffle=None, batch_size=BATCH, backend=AD, dtype=np.float32, n_valid=N_VALID):
    """(train, valid): train on the autodiff device (shuffled with seed `shuffle` if given, else
    in order), valid on its inner device in batches of BATCH, as Burn's learner expects."""
    train = DataLoaderBuilder(Batcher(dtype)).batch_size(batch_size).set_device(backend.device())
    if shuffle is not None:
        train = train.shuffle(shuffle)
    valid = DataLoaderBuilder(Batcher(dtype)).batch_size(BATCH).set_device(backend.device().inner())
    return (
        train.build(InMemDataset(make_items(N_TRAIN, 0, dtype))),
        valid.build(InMemDataset(make_items(n_valid, 1, dtype))),
    )


class Mlp(Module):
    """linear2(relu(linear1(x))) with a cross-entropy loss (times `loss_scale` when training)."""

    linear1: Module
    linear2: Module
    activation: Relu = Relu()
    loss_scale: float = 1.0

    def forward(self, x):
        return self.linear2.forward(self.activation.forward(self.linear1.forward(x)))

    def forward_classification(self, batch):
        logits = self.forward(batch.inputs)
        loss = CrossEntropyLossConfig().init(logits.device()).forward(logits, batch.targets)
        return ClassificationOutput(loss, logits, batch.targets)

    def train_step(self, batch):
        item = self.forward_classification(batch)
        loss = item.loss if self.loss_scale == 1.0 else item.loss * self.loss_scale
        return TrainOutput(self, loss.backward(), item)

    def valid_step(self, batch):
        return self.forward_classification(batch)


def init_model(seed=0, backend=AD, d_hidden=D_HIDDEN, loss_scale=1.0) -> Mlp:
    """A freshly initialised Mlp on `backend`'s device (weights fixed by `seed`)."""
    backend.seed(seed)
    device = backend.device()
    return Mlp(
        linear1=LinearConfig(D_IN, d_hidden).init(device),
        linear2=LinearConfig(d_hidden, N_CLASSES).init(device),
        loss_scale=loss_scale,
    )


def scheduler():
    """StepLr: 2e-2 for the first 6 iterations (one epoch), then halved every 6."""
    return StepLrSchedulerConfig(2e-2, 6).with_gamma(0.5).init()


def dashboard_builder(path, epochs: int, hold: str | None):
    """LearnerBuilder for the dashboard child processes: accuracy + loss (train and valid), the
    default renderer (the live dashboard on a terminal), a summary at the end, and, when `hold` is
    "EPOCH,ITERATION", a `HoldUntilStopped` there that writes `path/holding`."""
    b = (
        LearnerBuilder(path)
        .metric_train_numeric(AccuracyMetric())
        .metric_valid_numeric(AccuracyMetric())
        .metric_train_numeric(LossMetric())
        .metric_valid_numeric(LossMetric())
        .num_epochs(epochs)
        .summary()
    )
    if hold:
        epoch, iteration = (int(v) for v in hold.split(","))
        b = b.metric_train(
            HoldUntilStopped(b.interrupter(), epoch, iteration, Path(path) / "holding")
        )
    return b


def builder(path, epochs=3, recorder=None, out=None):
    """LearnerBuilder with accuracy + loss (train and valid), the train LR, a file checkpointer
    (`NamedMpkFileRecorder` unless given) and plain-text rendering into `out`."""
    return (
        LearnerBuilder(path)
        .metric_train_numeric(AccuracyMetric())
        .metric_valid_numeric(AccuracyMetric())
        .metric_train_numeric(LossMetric())
        .metric_valid_numeric(LossMetric())
        .metric_train(LearningRateMetric())
        .with_file_checkpointer(recorder or NamedMpkFileRecorder())
        .renderer(CliMetricsRenderer(out or io.StringIO(), interval=0))
        .devices([AD.device()])
        .num_epochs(epochs)
    )


def fit(b, model=None, optim=None, sched=None, shuffle=None):
    """Build `b` with the Mlp, Adam and `scheduler()` (unless given) and fit; (learner, model)."""
    train, valid = loaders(shuffle)
    learner = b.build(model or init_model(), optim or AdamConfig().init(), sched or scheduler())
    return learner, learner.fit(train, valid)


def params(model) -> dict[str, np.ndarray]:
    """{path: numpy copy} of every parameter."""
    return {path: p.val().numpy().copy() for path, p in model.named_parameters()}


def adam_steps(optim) -> int:
    """How many updates an Adam optimizer applied: the step count `time` kept in each parameter's
    state (Burn's `AdaptiveMomentumState`); it is the same for every parameter."""
    times = {state["momentum"]["time"] for state in optim.to_record().values()}
    assert len(times) == 1, f"parameters were updated unequally often: {times}"
    return times.pop()


class HoldUntilStopped(Metric):
    """A train metric that, at training (epoch, iteration), writes `marker` and then waits until
    the interrupter is stopped (by `q`, Ctrl-C or SIGINT from the test), at most `timeout` seconds.

    Training then stops at exactly that point, however loaded the machine is: `epoch - 1` epochs
    completed, `iteration` steps into `epoch`. The test waits for `marker` before it stops the run.
    """

    Input = None

    def __init__(self, interrupter, epoch: int, iteration: int, marker: Path, timeout=300.0):
        self.interrupter, self.at, self.marker = interrupter, (epoch, iteration), Path(marker)
        self.timeout = timeout

    def name(self):
        return "Hold"

    def update(self, item, metadata):
        if (metadata.epoch, metadata.iteration) == self.at:
            self.marker.write_text(f"holding at epoch {self.at[0]} iteration {self.at[1]}\n")
            end = time.monotonic() + self.timeout
            while not self.interrupter.should_stop() and time.monotonic() < end:
                time.sleep(0.02)
        return MetricEntry("Hold", "", "0,1")

    def clear(self):
        pass
