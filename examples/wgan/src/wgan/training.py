"""Training of Burn's wgan example: per batch one critic step (loss `-D(real) + D(fake)`,
RMSProp, then weight clipping), and every `num_critic` batches one generator step (loss
`-D(G(z))`). Samples are written as a 5x5 grid every `sample_interval` epochs."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from burn_nn import config
from burn_optim import GradientsParams, RmsPropConfig
from burn_tensor import Distribution, Tensor

from .model import Clip, ModelConfig


@config
class TrainingConfig:
    """Burn's: 200 epochs, batch 512, seed 5, lr 3e-4, 5 critic steps per generator step,
    clip 0.01, a sample every 10 epochs, and the RMSProp of Burn's `wgan-mnist` launcher
    (alpha 0.99, **momentum 0**, epsilon 8e-8, not centered), not `RmsPropConfig()`'s defaults:
    Burn's RMSProp defaults to momentum 0.9, and with it the clipped critic's loss ran away and
    the generator collapsed (the WGAN paper chose RMSProp as momentum made training unstable)."""

    model: ModelConfig
    optimizer: RmsPropConfig = RmsPropConfig(
        alpha=0.99, momentum=0.0, epsilon=8e-8, centered=False
    )
    num_epochs: int = 200
    batch_size: int = 512
    seed: int = 5
    lr: float = 3e-4
    num_critic: int = 5
    clip_value: float = 0.01
    sample_interval: int = 10


@dataclass(frozen=True)
class Result:
    """Per-epoch means of the critic's Wasserstein estimate `D(real) - D(fake)` and the first
    and last 64 generated images (numpy `[64, 28, 28]` in [-1, 1])."""

    generator: object
    critic: object
    wasserstein: list[float]
    first_samples: np.ndarray
    last_samples: np.ndarray


def digits_in_tanh_range(images: np.ndarray) -> np.ndarray:
    """`[n, 28, 28]` values 0..255 -> `[n, 1, 28, 28]` float32 in [-1, 1] (the generator's tanh)."""
    return (images.astype(np.float32) / 127.5 - 1.0)[:, None, :, :]


def save_grid(images: np.ndarray, path: Path, nrow: int = 5) -> None:
    """Write the first nrow*nrow images `[n, h, w]` (values in [-1, 1]) as one binary PGM grid,
    min-max normalized as Burn's example does; written to a temp file then renamed."""
    imgs = images[: nrow * nrow].astype(np.float64)
    imgs = (imgs - imgs.min()) / max(imgs.max() - imgs.min(), 1e-12)
    n, h, w = imgs.shape
    grid = np.zeros((nrow * h, nrow * w), dtype=np.uint8)
    for k in range(n):
        r, c = divmod(k, nrow)
        grid[r * h : (r + 1) * h, c * w : (c + 1) * w] = np.round(imgs[k] * 255).astype(np.uint8)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(f"P5 {grid.shape[1]} {grid.shape[0]} 255\n".encode() + grid.tobytes())
    os.replace(tmp, path)


def train(cfg: TrainingConfig, device, images: np.ndarray, artifact_dir: str | Path,
          log=print) -> Result:  # fmt: skip
    """Train on `images` (`[n, 1, 28, 28]` in [-1, 1]) on `device` (an autodiff device)."""
    if len(images) < cfg.batch_size:
        raise ValueError(f"wgan: {len(images)} images is fewer than one batch of {cfg.batch_size}")
    art = Path(artifact_dir)
    art.mkdir(parents=True, exist_ok=True)
    device.seed(cfg.seed)
    generator, critic = cfg.model.init(device)
    opt_g, opt_d = cfg.optimizer.init(), cfg.optimizer.init()
    clip = Clip(-cfg.clip_value, cfg.clip_value)
    rng = np.random.default_rng(cfg.seed)
    m = cfg.model
    num_batches = len(images) // cfg.batch_size  # full batches only: BatchNorm and the shape
    fixed = Tensor.random([64, m.latent_dim], Distribution.normal(0.0, 1.0), device)
    first = _sample(generator, fixed, m)
    wasserstein = []
    for epoch in range(cfg.num_epochs):
        order = rng.permutation(len(images))
        w_sum = 0.0
        for it in range(num_batches):
            real = Tensor.from_data(images[order[it * cfg.batch_size : (it + 1) * cfg.batch_size]],
                                    device)  # fmt: skip
            noise = Tensor.random([cfg.batch_size, m.latent_dim], Distribution.normal(0.0, 1.0),
                                  device)  # fmt: skip
            shape = [cfg.batch_size, m.channels, m.image_size, m.image_size]
            fake = generator.forward(noise).detach().reshape(shape)  # the critic step only
            loss_d = critic.forward(real).mean().neg().add(critic.forward(fake).mean())
            grads = GradientsParams.from_grads(loss_d.backward(), critic)
            critic = opt_d.step(cfg.lr, critic, grads).map(clip)
            d_loss = float(loss_d.into_scalar())
            w_sum -= d_loss
            if it % cfg.num_critic == 0:
                loss_g = critic.forward(generator.forward(noise).reshape(shape)).mean().neg()
                grads = GradientsParams.from_grads(loss_g.backward(), generator)
                generator = opt_g.step(cfg.lr, generator, grads)
                log(f"[Epoch {epoch + 1}/{cfg.num_epochs}] [Batch {it}/{num_batches}] "
                    f"[D loss: {d_loss:.5f}] [G loss: {float(loss_g.into_scalar()):.5f}]")  # fmt: skip
        wasserstein.append(w_sum / num_batches)
        if epoch % cfg.sample_interval == 0 or epoch + 1 == cfg.num_epochs:
            save_grid(_sample(generator, fixed, m), art / f"image-{epoch}.pgm")
    return Result(generator, critic, wasserstein, first, _sample(generator, fixed, m))


def _sample(generator, noise: Tensor, m: ModelConfig) -> np.ndarray:
    """The generator in training mode, as Burn's samples are (BatchNorm on the batch's own
    statistics), on a fixed `noise` -> `[n, 28, 28]`."""
    out = generator.forward(noise).detach()
    return out.to_data().numpy().reshape(-1, m.image_size, m.image_size)
