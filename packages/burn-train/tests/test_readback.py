"""No host read per training step (issue 35 item 2): on a backend whose reads wait for the device
(a GPU), the Learner reads `read_every` steps' values back together, and the metrics and logs get
the same numbers as per-step reads.

`Counting` is the real NdArray backend with one change: it counts every read of a tensor's values
to the host (`float_into_data`, `int_into_data`, `bool_into_data`, which `to_data`, `numpy`,
`into_scalar` and `item` all end in) and says its reads wait for the device
(`checks_force_sync = True`), as CUDA and a GPU's OpenCL do. The model records the read count
at the start of every `train_step`, so the reads of each step are known exactly.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
import real_parts as parts
from burn_autodiff import Autodiff
from burn_dataset import DataLoaderBuilder, InMemDataset
from burn_ndarray import NdArray
from burn_optim import AdamConfig
from burn_train import LearnerBuilder, NonFiniteLossError
from burn_train.metric import AccuracyMetric, IterationSpeedMetric, LearningRateMetric, LossMetric
from burn_train.renderer import CliMetricsRenderer


class Counting(NdArray):
    """NdArray that counts its host reads and, like a GPU backend, says reads wait."""

    checks_force_sync = True
    reads = 0

    def float_into_data(self, p):
        Counting.reads += 1
        return super().float_into_data(p)

    def int_into_data(self, p):
        Counting.reads += 1
        return super().int_into_data(p)

    def bool_into_data(self, p):
        Counting.reads += 1
        return super().bool_into_data(p)


AD = Autodiff(Counting())
STEPS = parts.N_TRAIN // parts.BATCH  # 6 training steps per epoch


class CountedMlp(parts.Mlp):
    """The test Mlp, noting the host-read count when each training step starts."""

    def train_step(self, batch):
        SEEN.append(Counting.reads)
        return super().train_step(batch)


SEEN: list[int] = []


def _model(seed=0):
    AD.seed(seed)
    device = AD.device()
    from burn_nn import LinearConfig

    return CountedMlp(
        linear1=LinearConfig(parts.D_IN, parts.D_HIDDEN).init(device),
        linear2=LinearConfig(parts.D_HIDDEN, parts.N_CLASSES).init(device),
    )


def _builder(path, read_every=None, epochs=2):
    b = (
        LearnerBuilder(path)
        .metric_train_numeric(AccuracyMetric())
        .metric_valid_numeric(AccuracyMetric())
        .metric_train_numeric(LossMetric())
        .metric_valid_numeric(LossMetric())
        .metric_train(LearningRateMetric())
        .renderer(CliMetricsRenderer(io.StringIO(), interval=0))
        .with_application_logger(False)
        .num_epochs(epochs)
    )
    return b if read_every is None else b.read_every(read_every)


def _fit(path, read_every=None, epochs=2, train=None):
    SEEN.clear()
    default_train, valid = parts.loaders(backend=AD)
    learner = _builder(path, read_every, epochs).build(
        _model(), AdamConfig().init(), parts.scheduler()
    )
    before = Counting.reads
    model = learner.fit(train or default_train, valid)
    return learner, model, [s - before for s in SEEN], Counting.reads - before


def _logs(path):
    return {
        p.relative_to(path).as_posix(): p.read_text()
        for p in sorted(path.glob("*/epoch-*/*.log"))
    }


def test_logged_values_equal_per_step_reads(tmp_path):
    """Every logged value (each step's loss, accuracy and learning rate, train and valid) is the
    same text with reads batched by 4 (6 steps: batches of 4 and 2) as with a read per step."""
    _, eager_model, _, _ = _fit(tmp_path / "eager", read_every=1)
    _, batched_model, _, _ = _fit(tmp_path / "batched", read_every=4)
    eager, batched = _logs(tmp_path / "eager"), _logs(tmp_path / "batched")
    assert "train/epoch-2/Loss.log" in eager and "valid/epoch-1/Accuracy.log" in eager
    assert len(eager["train/epoch-1/Loss.log"].split()) == STEPS
    assert batched == eager
    for (_, a), (_, b) in zip(
        eager_model.named_parameters(), batched_model.named_parameters(), strict=True
    ):
        np.testing.assert_array_equal(a.val().numpy(), b.val().numpy())


def test_reads_per_step(tmp_path):
    """Per-step reads: 4 reads in every training step (the loss check, the loss metric, the
    accuracy's logits and targets). Batched by 3: no read inside a batch; after each 3rd step
    one read per dtype of the items (float32 losses and logits, int targets): 2 reads per 3
    steps, where per-step reads take 12."""
    _, _, eager_seen, _ = _fit(tmp_path / "eager", read_every=1, epochs=1)
    assert np.diff(eager_seen).tolist() == [4] * (STEPS - 1)
    _, _, seen, _ = _fit(tmp_path / "batched", read_every=3, epochs=1)
    # reads before step i+1 minus reads before step i: 0 inside a batch, 2 after its last step
    assert np.diff(seen).tolist() == [0, 0, 2, 0, 0]


def test_the_default_on_a_backend_whose_reads_wait_reads_16_steps_at_once(tmp_path):
    """No `read_every`: on `Counting` (reads wait, as on a GPU) an epoch of 6 steps makes no read
    inside the epoch: its 6 steps are read together when it ends (2 reads: float, int), and so
    are the 3 validation steps (2 more) before the next epoch's first step."""
    learner, _, seen, _ = _fit(tmp_path, epochs=2)
    assert learner.epochs_completed == 2
    # epoch 1: no read before steps 2..6; its end reads the train items (2) and the
    # validation items (2 groups of 3 batches, read together at the end: 2 reads)
    assert np.diff(seen[:STEPS]).tolist() == [0] * (STEPS - 1)
    assert seen[STEPS] - seen[STEPS - 1] == 4


def test_a_deferred_nan_loss_names_its_step_and_returns_a_finite_model(tmp_path):
    """Batched by 4, a NaN in batch 2 is found when the batch of steps is read; the error still
    names iteration 2, and its model is the one before the batch's first step (finite)."""
    items = parts.make_items(parts.N_TRAIN, 0)
    x, y = items[20]
    items[20] = (np.full_like(x, np.nan), y)
    train = (
        DataLoaderBuilder(parts.Batcher()).batch_size(parts.BATCH).set_device(AD.device())
    ).build(InMemDataset(items))
    initial = {k: v.val().numpy().copy() for k, v in _model().named_parameters()}
    with pytest.raises(NonFiniteLossError, match="nan at epoch 1, iteration 2") as e:
        _fit(tmp_path, read_every=4, train=train)
    assert math.isnan(e.value.value)
    got = {k: v.val().numpy() for k, v in e.value.model.named_parameters()}
    assert got.keys() == initial.keys()
    for k in got:
        np.testing.assert_array_equal(got[k], initial[k])
    # iteration 1's values reached the log before the error
    assert len((tmp_path / "train/epoch-1/Loss.log").read_text().split()) == 1


def test_iteration_speed_uses_the_time_each_step_ran(tmp_path):
    """Steps read together do not look simultaneous: the speed comes from `MetricMetadata.time`."""
    b = _builder(tmp_path, read_every=6, epochs=1).metric_train_numeric(IterationSpeedMetric())
    train, valid = parts.loaders(backend=AD)
    b.build(_model(), AdamConfig().init(), 1e-2).fit(train, valid)
    speeds = [
        float(line.split(",")[0])
        for line in (tmp_path / "train/epoch-1/Iteration Speed.log").read_text().split()
    ]
    assert len(speeds) == STEPS and speeds[0] == 0.0
    assert all(0 < s < 1e5 for s in speeds[1:]), speeds  # read at once they would be ~1e6+


def test_read_every_refuses_zero(tmp_path):
    with pytest.raises(ValueError, match="read_every must be an integer >= 1, got 0"):
        LearnerBuilder(tmp_path).read_every(0)


def test_a_pending_item_keeps_its_values_not_the_autodiff_graph():
    """Steps waiting to be read hold inner-backend tensors (no graph: the forward's activations
    are freed as without batching); the values read are the autodiff tensors' values."""
    from burn_train import ClassificationOutput
    from burn_train.learner._readback import Readback

    device = AD.device()
    logits = parts.Tensor.from_data(np.array([[0.5, 1.5]], np.float32), device).require_grad()
    loss = (logits * 2.0).sum()
    targets = parts.Tensor.from_data(np.array([1], np.int64), device)
    handled = []
    readback = Readback(2, lambda item, meta: handled.append(item))
    readback.push(ClassificationOutput(loss, logits * 1.0, targets), None)
    pending = readback.pending[0][0]
    assert not any(
        t.device.backend.is_autodiff for t in (pending.loss, pending.output, pending.targets)
    )
    readback.flush()
    (item,) = handled
    assert float(item.loss.reshape(-1)[0]) == 4.0 and item.output.tolist() == [[0.5, 1.5]]
    assert item.targets.tolist() == [1]
