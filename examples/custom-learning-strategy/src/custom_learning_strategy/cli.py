"""`custom-learning-strategy`: train the guide's model with a hand-written epoch loop."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    from burn_tensor import add_backend_argument

    parser = argparse.ArgumentParser(prog="custom-learning-strategy", description=__doc__)
    parser.add_argument("--epochs", type=int, default=5, help="number of epochs (Burn: 5)")
    parser.add_argument(
        "--limit", type=int, default=None,
        help="use only the first N digits (5/6 train, 1/6 valid); default: all 1437",
    )  # fmt: skip
    parser.add_argument(
        "--artifact-dir", default="artifacts/custom-learning-strategy",
        help="where logs, checkpoints and the model go (emptied first)",
    )  # fmt: skip
    add_backend_argument(parser, autodiff=True)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.epochs < 1 or (args.limit is not None and args.limit < 12):
        print("error: --epochs must be >= 1 and --limit >= 12", file=sys.stderr)
        return 2
    from burn_autodiff import Autodiff
    from burn_dataset.vision import DigitsDataset
    from burn_tensor import resolve_backend

    from .training import run

    _, inner, line = resolve_backend(args.backend)
    print(line, flush=True)
    result = run(
        Autodiff(inner).device(), DigitsDataset.train(), args.artifact_dir, args.epochs, args.limit
    )
    print(f"epochs completed: {result.learner.epochs_completed}; model saved in {args.artifact_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
