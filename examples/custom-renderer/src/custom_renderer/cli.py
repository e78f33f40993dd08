"""`custom-renderer`: train with a renderer that prints every progress update."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    from burn_tensor import add_backend_argument

    parser = argparse.ArgumentParser(prog="custom-renderer", description=__doc__)
    parser.add_argument("--epochs", type=int, default=10, help="number of epochs (Burn: 10)")
    parser.add_argument(
        "--limit", type=int, default=None,
        help="use only the first N training and N/4 test digits (default: all)",
    )  # fmt: skip
    parser.add_argument(
        "--artifact-dir", default="artifacts/custom-renderer", help="where the metric logs go"
    )
    add_backend_argument(parser, autodiff=True)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.epochs < 1 or (args.limit is not None and args.limit < 4):
        print("error: --epochs must be >= 1 and --limit >= 4", file=sys.stderr)
        return 2
    from burn_autodiff import Autodiff
    from burn_dataset import PartialDataset
    from burn_dataset.vision import DigitsDataset
    from burn_tensor import resolve_backend

    from .renderer import run

    _, inner, line = resolve_backend(args.backend)
    print(line, flush=True)
    train, test = DigitsDataset.train(), DigitsDataset.test()
    if args.limit is not None:
        train = PartialDataset(train, 0, min(args.limit, len(train)))
        test = PartialDataset(test, 0, min(args.limit // 4, len(test)))
    renderer, evaluator = run(Autodiff(inner).device(), train, test, args.artifact_dir, args.epochs)
    acc = evaluator.results["digits-test"]["Accuracy"]
    print(f"rendered {renderer.lines}; test accuracy {acc:.2f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
