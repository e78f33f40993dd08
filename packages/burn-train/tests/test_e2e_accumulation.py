"""Gradient accumulation with real components (burn_nn MLP on `Autodiff(NdArray(float64))`,
burn_optim's SGD, burn_dataset loaders without shuffle): 2 x batch 16 == 1 x batch 32.

Burn's semantics (and ours): `GradientsAccumulator` SUMS the gradients of the accumulated steps
and the optimizer is stepped once with that sum and the learning rate of the last step. The loss
is a mean over the batch, so for two halves A, B of a batch of 32:

    grad(mean_A) + grad(mean_B) = 2 * grad(mean_{A+B})

so `grads_accumulation(2)` over batches of 16 is exactly a batch of 32 whose loss is scaled by 2
(for any optimizer settings: the optimizer sees the same gradient; for SGD without weight decay
also a batch of 32 at twice the learning rate) -- not the plain batch-32 run, which moves half as
far.
"""

import io

import numpy as np
from burn_autodiff import Autodiff
from burn_ndarray import NdArray
from burn_optim import MomentumConfig, SgdConfig, WeightDecayConfig
from burn_record import NamedMpkFileRecorder
from burn_train import LearnerBuilder
from burn_train.metric import AccuracyMetric, LossMetric
from burn_train.renderer import CliMetricsRenderer
from real_parts import init_model as real_init_model
from real_parts import loaders as real_loaders

AD = Autodiff(NdArray(float_dtype="float64"))
D_HIDDEN, N_VALID = 8, 32
LR, EPOCHS = 0.05, 2


def loaders(batch_size):
    # no shuffle: batch 32 number k holds exactly batches 16 number 2k and 2k+1
    return real_loaders(None, batch_size, AD, np.float64, n_valid=N_VALID)


def init_model(loss_scale=1.0):
    return real_init_model(0, AD, D_HIDDEN, loss_scale)


def train(path, batch_size, accumulation=None, loss_scale=1.0, lr=LR, optim=None):
    b = (
        LearnerBuilder(path)
        .metric_train_numeric(AccuracyMetric())
        .metric_train_numeric(LossMetric())
        .metric_valid_numeric(LossMetric())
        .with_file_checkpointer(NamedMpkFileRecorder())
        .renderer(CliMetricsRenderer(io.StringIO(), interval=0))
        .num_epochs(EPOCHS)
    )
    if accumulation:
        b = b.grads_accumulation(accumulation)
    train_loader, valid_loader = loaders(batch_size)
    learner = b.build(init_model(loss_scale), (optim or SgdConfig()).init(), lr)
    model = learner.fit(train_loader, valid_loader)
    return {path: p.val().numpy().copy() for path, p in model.named_parameters()}


def test_grads_accumulation_2x16_equals_batch_32_with_loss_scaled_by_2(tmp_path):
    start = {path: p.val().numpy().copy() for path, p in init_model().named_parameters()}
    assert len(start) == 4 and all(v.dtype == np.float64 for v in start.values())

    accumulated = train(tmp_path / "acc", batch_size=16, accumulation=2)
    scaled_loss = train(tmp_path / "scaled", batch_size=32, loss_scale=2.0)
    double_lr = train(tmp_path / "lr", batch_size=32, lr=2 * LR)
    plain = train(tmp_path / "plain", batch_size=32)

    assert accumulated.keys() == scaled_loss.keys() == start.keys()
    for key in start:
        # it trained: 2 epochs x 3 optimizer steps moved every parameter
        assert np.abs(accumulated[key] - start[key]).max() > 1e-3
        # 2 x 16 (summed gradients) == 32 with the loss scaled by 2 == 32 at 2 x lr (plain SGD)
        np.testing.assert_allclose(accumulated[key], scaled_loss[key], rtol=0, atol=1e-12)
        np.testing.assert_allclose(accumulated[key], double_lr[key], rtol=0, atol=1e-12)
    # the accumulator sums, it does not average: a plain batch-32 run is NOT the same
    assert max(np.abs(accumulated[k] - plain[k]).max() for k in start) > 1e-3

    # one metric line per iteration (6 with batch 16, 3 with batch 32), one checkpoint per epoch
    for path, n in (("acc", 6), ("scaled", 3)):
        lines = (tmp_path / path / "train/epoch-2/Loss.log").read_text().splitlines()
        assert len(lines) == n
    assert sorted(p.name for p in (tmp_path / "acc/checkpoint").glob("model-*")) == [
        "model-1.mpk",
        "model-2.mpk",
    ]

    # loss x 2 is the exact relation for any optimizer settings (the optimizer sees the same
    # gradient): SGD with momentum and weight decay too, where 2 x lr no longer matches
    sgd = SgdConfig().with_momentum(MomentumConfig(momentum=0.9, dampening=0.0))
    sgd = sgd.with_weight_decay(WeightDecayConfig(penalty=0.1))
    accumulated = train(tmp_path / "acc_m", batch_size=16, accumulation=2, optim=sgd)
    scaled_loss = train(tmp_path / "scaled_m", batch_size=32, loss_scale=2.0, optim=sgd)
    double_lr = train(tmp_path / "lr_m", batch_size=32, lr=2 * LR, optim=sgd)
    for key in start:
        np.testing.assert_allclose(accumulated[key], scaled_loss[key], rtol=0, atol=1e-12)
    assert max(np.abs(accumulated[k] - double_lr[k]).max() for k in start) > 1e-4
