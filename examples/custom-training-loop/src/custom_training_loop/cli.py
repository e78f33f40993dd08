"""`custom-training-loop`: train the digit classifier with the book's custom loop."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    """The `custom-training-loop` command line."""
    from burn_tensor import add_backend_argument

    parser = argparse.ArgumentParser(prog="custom-training-loop", description=__doc__)
    add_backend_argument(parser, autodiff=True)
    parser.add_argument(
        "--epochs", type=int, default=None, help="number of epochs (default: the config's, 10)"
    )
    parser.add_argument(
        "--limit", type=int, default=None, help="use only the first N items of each split"
    )
    parser.add_argument(
        "--hidden-size",
        type=int,
        default=128,
        help="width of the model's hidden linear layer (default: %(default)s)",
    )
    parser.add_argument(
        "--log-every",
        type=int,
        default=0,
        help="also log the loss every N iterations (default: 0, epoch summaries only)",
    )
    parser.add_argument(
        "--devices",
        type=int,
        default=1,
        help="train data-parallel on N devices of the backend (NdArray: N logical CPU devices)",
    )
    parser.add_argument(
        "--mixed-precision",
        choices=("bf16", "f16"),
        default=None,
        help="train with half-precision matmuls and float32 parameters and optimizer state "
        "(f16: with dynamic loss scaling; default: full precision)",
    )
    parser.add_argument(
        "--capture",
        action="store_true",
        help="run each training step as a captured step (burn.capture; a fusion backend)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Train; a backend error is one line on stderr and exit 2."""
    args = build_parser().parse_args(argv)
    from burn_tensor import BackendError

    try:
        return _run(args)
    except BackendError as e:
        print(f"custom-training-loop: error: {e}", file=sys.stderr)
        return 2


def _run(args) -> int:
    from burn_autodiff import Autodiff
    from burn_dataset import PartialDataset
    from burn_dataset.vision import DigitsDataset
    from burn_optim import AdamConfig
    from burn_tensor import resolve_backend

    from .model import ModelConfig
    from .training import TrainingConfig, run

    if args.devices < 1:
        raise SystemExit("--devices must be >= 1")
    if args.devices > 1 and args.mixed_precision:
        raise SystemExit("--mixed-precision runs on one device (--devices 1)")
    if args.capture and (args.devices > 1 or args.mixed_precision):
        raise SystemExit("--capture runs on one device in full precision")
    name, inner, line = resolve_backend(args.backend)
    print(line, flush=True)
    if args.devices > 1 and name == "ndarray":
        from burn_ndarray import NdArray

        inner = NdArray(num_devices=args.devices)
    backend = Autodiff(inner)
    if backend.device_count() < args.devices:
        raise SystemExit(f"--devices {args.devices}: {name} has {backend.device_count()}")
    device = backend.device()
    train_set, valid_set = DigitsDataset.train(), DigitsDataset.test()
    if args.limit is not None:
        train_set = PartialDataset(train_set, 0, min(args.limit, len(train_set)))
        valid_set = PartialDataset(valid_set, 0, min(args.limit, len(valid_set)))
    config = TrainingConfig(ModelConfig(10, args.hidden_size), AdamConfig())
    if args.epochs is not None:
        config = config.with_num_epochs(args.epochs)
    if args.devices > 1:
        from .parallel import run_data_parallel

        devices = [backend.device(i) for i in range(args.devices)]
        run_data_parallel(config, devices, train_set, valid_set)
    else:
        precision = None
        if args.mixed_precision is not None:
            from burn_optim import MixedPrecision

            precision = MixedPrecision(args.mixed_precision)
        run(
            config,
            device,
            train_set,
            valid_set,
            log_every=args.log_every,
            precision=precision,
            capture=args.capture,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
