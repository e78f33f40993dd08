"""`wgan`: train Burn's Wasserstein GAN on the bundled digits, writing sample grids."""

from __future__ import annotations

import argparse


def build_parser() -> argparse.ArgumentParser:
    from burn_tensor import add_backend_argument

    p = argparse.ArgumentParser(prog="wgan", description=__doc__)
    p.add_argument("--num-epochs", type=int, default=200, help="epochs (Burn: 200)")
    p.add_argument("--batch-size", type=int, default=512, help="batch size (Burn: 512)")
    p.add_argument("--lr", type=float, default=3e-4, help="RMSProp learning rate (Burn: 3e-4)")
    p.add_argument("--seed", type=int, default=5, help="seed of init, noise, shuffle (Burn: 5)")
    p.add_argument("--sample-interval", type=int, default=10, help="epochs between sample grids")
    p.add_argument("--artifact-dir", default="artifacts/wgan", help="where sample grids go")
    add_backend_argument(p, autodiff=True)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if min(args.num_epochs, args.batch_size, args.sample_interval) < 1:
        parser.error("--num-epochs, --batch-size and --sample-interval must be >= 1")
    if args.batch_size > 1437:
        parser.error("--batch-size must be <= 1437 (the bundled training digits)")
    import numpy as np
    from burn_autodiff import Autodiff
    from burn_dataset.vision import DigitsDataset
    from burn_tensor import resolve_backend

    from .model import ModelConfig
    from .quality import sample_report
    from .training import TrainingConfig, digits_in_tanh_range, train

    _, inner, line = resolve_backend(args.backend)
    print(line, flush=True)
    images, test = (digits_in_tanh_range(np.stack([ds.get(i).image for i in range(len(ds))]))
                    for ds in (DigitsDataset.train(), DigitsDataset.test()))  # fmt: skip
    cfg = TrainingConfig(ModelConfig(), num_epochs=args.num_epochs, batch_size=args.batch_size,
                         lr=args.lr, sample_interval=args.sample_interval,
                         seed=args.seed)  # fmt: skip
    r = train(cfg, Autodiff(inner).device(), images, args.artifact_dir,
              log=lambda s: print(s, flush=True))  # fmt: skip
    print("Wasserstein estimate per epoch (first, last): "
          f"{r.wasserstein[0]:.5f}, {r.wasserstein[-1]:.5f}")  # fmt: skip
    # the 25 samples of the last grid, against 25 real test digits (see wgan.quality)
    for text in sample_report(r.last_samples[:25], images[:, 0], test[:, 0]).lines():
        print(text)
    print(f"samples in {args.artifact_dir}/image-*.pgm")
    return 0
