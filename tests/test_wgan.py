"""Burn's wgan example, quick mode (its README command with 2 epochs of batch 256): it trains,
writes sample grids, the critic's weights stay clipped, and the samples move toward the digits
(the mean generated image gets closer to the mean digit, in numpy float64)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from burn_autodiff import Autodiff
from burn_dataset.vision import DigitsDataset
from burn_ndarray import NdArray
from burn_optim import RmsPropConfig
from wgan import ModelConfig, TrainingConfig, digits_in_tanh_range, save_grid, train
from wgan.cli import main
from wgan.quality import mean_pairwise_distance, nearest_distances, sample_report


def _digits() -> np.ndarray:
    ds = DigitsDataset.train()
    return digits_in_tanh_range(np.stack([ds.get(i).image for i in range(len(ds))]))


def test_readme_quick_command_writes_sample_grids(tmp_path: Path, capsys):
    art = tmp_path / "wgan"
    assert main(["--backend", "ndarray", "--num-epochs", "2", "--batch-size", "256",
                 "--sample-interval", "1", "--artifact-dir", str(art)]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert out.count("[Batch 0/5]") == 2 and "Wasserstein estimate" in out
    assert "diversity (mean pairwise L2 of the samples)" in out and "nearest training digit" in out
    for name in ("image-0.pgm", "image-1.pgm"):
        data = (art / name).read_bytes()
        assert data.startswith(b"P5 140 140 255\n") and len(data) == len(b"P5 140 140 255\n") + 140 * 140


def test_training_clips_the_critic_and_moves_samples_toward_the_digits(tmp_path: Path):
    images = _digits()
    cfg = TrainingConfig(ModelConfig(), num_epochs=3, batch_size=256, sample_interval=100)
    r = train(cfg, Autodiff(NdArray()).device(), images, tmp_path, log=lambda s: None)
    worst = max(float(np.abs(p.val().to_data().numpy()).max()) for p in r.critic.parameters())
    assert worst <= 0.01 + 1e-7, worst  # weight clipping held after every critic step
    target = images[:, 0].astype(np.float64).mean(axis=0)
    before = np.abs(r.first_samples.astype(np.float64).mean(axis=0) - target).mean()
    after = np.abs(r.last_samples.astype(np.float64).mean(axis=0) - target).mean()
    assert after < before, (before, after)


def test_save_grid_normalizes_like_burn(tmp_path: Path):
    imgs = np.stack([np.full((2, 2), v) for v in np.linspace(-1.0, 0.5, 25)])
    save_grid(imgs, tmp_path / "g.pgm")
    raw = (tmp_path / "g.pgm").read_bytes()
    header = b"P5 10 10 255\n"
    grid = np.frombuffer(raw[len(header):], np.uint8).reshape(10, 10)
    assert raw.startswith(header) and grid[0, 0] == 0 and grid[-1, -1] == 255
    assert grid[0, 2] == round(255 / 24)  # second image: min-max normalized


def test_optimizer_is_burns_wgan_rmsprop_without_momentum():
    """Burn's `wgan-mnist` launcher passes RMSProp with momentum 0 and epsilon 8e-8; the port
    used `RmsPropConfig()` (momentum 0.9, epsilon 1e-5), under which the weight-clipped critic
    ran away (D loss -16, G loss 31) and the generator collapsed."""
    opt = TrainingConfig(ModelConfig()).optimizer
    assert (opt.alpha, opt.momentum, opt.epsilon, opt.centered) == (0.99, 0.0, 8e-8, False)
    assert opt.weight_decay is None


def test_train_steps_with_the_configured_optimizer(tmp_path: Path):
    # an epsilon of 1e9 makes every RMSProp step ~0: the generator must stay at its seeded init
    images = _digits()[:256]
    frozen = RmsPropConfig(momentum=0.0, epsilon=1e9)
    cfg = TrainingConfig(ModelConfig(), num_epochs=1, batch_size=128, optimizer=frozen)
    device = Autodiff(NdArray()).device()
    r = train(cfg, device, images, tmp_path, log=lambda s: None)
    device.seed(cfg.seed)
    init, _ = cfg.model.init(device)
    fresh = dict(init.named_parameters())
    for name, p in r.generator.named_parameters():
        if "running" in name:
            continue  # BatchNorm's running statistics move in every forward, not by the optimizer
        np.testing.assert_allclose(p.val().to_data().numpy(), fresh[name].val().to_data().numpy(),
                                   atol=1e-7, err_msg=name)  # fmt: skip


def test_quality_numbers_against_numpy():
    rng = np.random.default_rng(0)
    x, ref = rng.normal(size=(5, 4, 4)), rng.normal(size=(7, 4, 4))
    pairs = [np.linalg.norm(x[i] - x[j]) for i in range(5) for j in range(i + 1, 5)]
    assert np.isclose(mean_pairwise_distance(x), np.mean(pairs))
    want = [min(np.linalg.norm(a - b) for b in ref) for a in x]
    np.testing.assert_allclose(nearest_distances(x, ref), want, rtol=1e-9)
    same = np.repeat(x[:1], 25, axis=0)  # a collapsed generator: 25 copies of one image
    rep = sample_report(same, ref, x)
    assert rep.diversity < 1e-6 and rep.real_diversity > 1.0
