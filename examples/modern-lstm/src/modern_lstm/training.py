"""Training of Burn's modern-lstm example: a hand-written loop, MSE loss, AdamW with gradient
norm clipping, train/valid loss printed per epoch, the valid set's predictions printed
beside their targets."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from burn_nn import MseLoss, Reduction, config
from burn_optim import AdamWConfig, GradientClippingConfig, GradientsParams
from burn_tensor import Tensor

from .data import NOISE_LEVEL, NUM_SEQUENCES, SEQ_LENGTH, batches, generate
from .model import LstmNetwork, LstmNetworkConfig


@config
class TrainingConfig:
    """Burn's: 30 epochs, batch 32, lr 1e-3, 1000 sequences of 10 (80 % train, 20 % valid)."""

    model: LstmNetworkConfig
    num_epochs: int = 30
    batch_size: int = 32
    lr: float = 1e-3
    num_sequences: int = NUM_SEQUENCES
    seq_length: int = SEQ_LENGTH
    noise: float = NOISE_LEVEL
    seed: int = 42


@dataclass(frozen=True)
class Result:
    """What a run returns: the model, per-epoch mean losses (in the scaled units), the scale,
    and the valid set's predictions next to its targets (original units)."""

    model: LstmNetwork
    train_loss: list[float]
    valid_loss: list[float]
    scale: float
    predictions: np.ndarray
    targets: np.ndarray


def _mean_loss(model, seqs, targets, cfg, scale, device, rng=None, optim=None):
    """One pass; trains (and returns the updated model) when `optim` is given."""
    total, n = 0.0, 0
    for x, y in batches(seqs, targets, cfg.batch_size, scale, device, rng):
        loss = MseLoss().forward(model.forward(x), y, Reduction.Mean)
        if optim is not None:
            grads = GradientsParams.from_grads(loss.backward(), model)
            model = optim.step(cfg.lr, model, grads)
        total += float(loss.into_scalar()) * x.dims()[0]
        n += x.dims()[0]
    return model, total / n


def run(cfg: TrainingConfig, device, log=print) -> Result:
    """Train on `device` (an autodiff device); validation runs on `model.valid()`."""
    device.seed(cfg.seed)
    seqs, targets = generate(cfg.num_sequences, cfg.seq_length, cfg.noise)
    n_train = int(0.8 * len(seqs))
    if n_train < 1 or n_train == len(seqs):
        raise ValueError(f"modern-lstm: need at least 2 sequences to split, got {len(seqs)}")
    scale = float(np.abs(targets[:n_train]).max())  # fitted on the training part only
    model = cfg.model.init(device)
    optim = AdamWConfig().with_grad_clipping(GradientClippingConfig.Norm(1.0)).init()
    rng = np.random.default_rng(cfg.seed)
    train_loss, valid_loss = [], []
    for epoch in range(1, cfg.num_epochs + 1):
        model, tl = _mean_loss(model, seqs[:n_train], targets[:n_train], cfg, scale, device,
                               rng, optim)  # fmt: skip
        valid = model.valid()
        _, vl = _mean_loss(valid, seqs[n_train:], targets[n_train:], cfg, scale,
                           valid.devices()[0])  # fmt: skip
        train_loss.append(tl)
        valid_loss.append(vl)
        log(f"Epoch {epoch}/{cfg.num_epochs}: train loss {tl:.5f} | valid loss {vl:.5f}")
    valid = model.valid()
    x = (seqs[n_train:] / scale)[:, :, None].astype(np.float32)
    pred = valid.forward(Tensor.from_data(x, valid.devices()[0])).to_data().numpy()[:, 0] * scale
    return Result(model, train_loss, valid_loss, scale, pred, targets[n_train:])
