"""`custom-training-loop`: train the digit classifier with the book's custom loop."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="custom-training-loop", description=__doc__)
    parser.add_argument("--backend", default="ndarray", help="backend entry-point name")
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--limit", type=int, default=None, help="use only the first N items")
    parser.add_argument("--hidden-size", type=int, default=128)
    parser.add_argument("--log-every", type=int, default=0, help="log every N iterations too")
    args = parser.parse_args(argv)

    from burn_autodiff import Autodiff
    from burn_dataset import PartialDataset
    from burn_dataset.vision import DigitsDataset
    from burn_optim import AdamConfig
    from burn_tensor import get_backend

    from .model import ModelConfig
    from .training import TrainingConfig, run

    device = Autodiff(get_backend(args.backend)).device()
    train_set, valid_set = DigitsDataset.train(), DigitsDataset.test()
    if args.limit is not None:
        train_set = PartialDataset(train_set, 0, min(args.limit, len(train_set)))
        valid_set = PartialDataset(valid_set, 0, min(args.limit, len(valid_set)))
    config = TrainingConfig(ModelConfig(10, args.hidden_size), AdamConfig())
    if args.epochs is not None:
        config = config.with_num_epochs(args.epochs)
    run(config, device, train_set, valid_set, log_every=args.log_every)
    return 0


if __name__ == "__main__":
    sys.exit(main())
