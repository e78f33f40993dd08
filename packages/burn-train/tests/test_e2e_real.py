"""End to end with real components only: a burn_nn MLP on `Autodiff(NdArray())`, burn_optim's
Adam and StepLr scheduler, burn_dataset loaders (train shuffled) and a burn_record checkpointer."""

import io
from dataclasses import dataclass

import numpy as np
from burn_autodiff import Autodiff
from burn_dataset import DataLoaderBuilder, InMemDataset
from burn_ndarray import NdArray
from burn_nn import LinearConfig, Module, Relu
from burn_nn.loss import CrossEntropyLossConfig
from burn_optim import AdamConfig
from burn_optim.lr_scheduler import StepLrSchedulerConfig
from burn_record import CompactRecorder, NamedMpkFileRecorder
from burn_tensor import Tensor
from burn_train import ClassificationOutput, LearnerBuilder, LearnerSummary, TrainOutput
from burn_train.metric import AccuracyMetric, LearningRateMetric, LossMetric
from burn_train.renderer import CliMetricsRenderer

INNER = NdArray()
AD = Autodiff(INNER)
N_CLASSES, D_IN, D_HIDDEN = 3, 4, 16
N_TRAIN, N_VALID, BATCH = 96, 48, 16


def make_items(n, seed):
    rng = np.random.default_rng(seed)
    centers = np.array([[2, 0, 0, 1], [0, 2, 0, -1], [0, 0, 2, 0]], dtype=np.float32)
    labels = rng.integers(0, N_CLASSES, n)
    xs = centers[labels] + rng.normal(0, 1.0, (n, D_IN)).astype(np.float32)
    return [(xs[i], int(labels[i])) for i in range(n)]


@dataclass
class Batch:
    inputs: Tensor
    targets: Tensor


class Batcher:
    def batch(self, items, device):
        x = np.stack([i[0] for i in items]).astype(np.float32)
        y = np.array([i[1] for i in items], dtype=np.int64)
        return Batch(Tensor.from_data(x, device), Tensor.from_data(y, device))


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
            ("valid", "Accuracy", 3), ("valid", "Loss", 3)
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
