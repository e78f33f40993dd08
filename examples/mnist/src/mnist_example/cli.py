"""`mnist-example train` / `mnist-example infer`: Burn's mnist example from the command line."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    from burn_tensor import add_backend_argument

    parser = argparse.ArgumentParser(prog="mnist-example", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="{train,infer}")
    train = sub.add_parser(
        "train", help="train, evaluate on the test set, save model.bpk",
        description="Train the model, evaluate it on the test set, save model.mpk.gz and model.bpk.",
    )  # fmt: skip
    train.add_argument("--epochs", type=int, default=5, help="number of epochs (Burn: 5)")
    train.add_argument(
        "--limit", type=int, default=None, help="use the first N training and N/4 test images"
    )
    train.add_argument(
        "--dataset", choices=["digits", "mnist"], default="digits",
        help="the bundled digits (offline, default) or MNIST (downloaded)",
    )  # fmt: skip
    train.add_argument(
        "--artifact-dir", default="artifacts/mnist", help="where logs, checkpoints, model go"
    )
    add_backend_argument(train, autodiff=True)
    infer = sub.add_parser(
        "infer", help="accuracy of a Burnpack's weights on the test digits",
        description="Load a Burnpack into the model and report its accuracy on the test digits.",
    )  # fmt: skip
    infer.add_argument("weights", help="a .bpk file for this model (burn-py's or Rust Burn's)")
    add_backend_argument(infer, autodiff=True)
    return parser


def _datasets(name: str, limit: int | None):
    from burn_dataset import PartialDataset
    from burn_dataset.vision import DigitsDataset, MnistDataset

    train, test = (
        (DigitsDataset.train(), DigitsDataset.test())
        if name == "digits"
        else (MnistDataset.train(), MnistDataset.test())
    )
    if limit is not None:
        train = PartialDataset(train, 0, min(limit, len(train)))
        test = PartialDataset(test, 0, min(max(limit // 4, 1), len(test)))
    return train, test


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from burn_autodiff import Autodiff
    from burn_tensor import resolve_backend

    from .training import evaluate_weights, run

    _, inner, line = resolve_backend(args.backend)
    print(line, flush=True)
    if args.command == "infer":
        _, test = _datasets("digits", None)
        try:
            acc, report = evaluate_weights(args.weights, inner.device(), test)
        except (FileNotFoundError, ValueError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        print(f"{report}\naccuracy on {len(test)} test digits: {acc:.2f} %")
        return 0
    if args.epochs < 1 or (args.limit is not None and args.limit < 24):
        print("error: --epochs must be >= 1 and --limit >= 24", file=sys.stderr)
        return 2
    train, test = _datasets(args.dataset, args.limit)
    result, evaluator = run(Autodiff(inner).device(), train, test, args.artifact_dir, args.epochs)
    acc = evaluator.results["test"]["Accuracy"]
    print(f"epochs {result.learner.epochs_completed}; test accuracy {acc:.2f} %; "
          f"model: {args.artifact_dir}/model.bpk")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
