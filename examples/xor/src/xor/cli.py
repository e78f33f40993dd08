"""`xor train` / `xor infer`: train and save, then load in a fresh process and predict."""

from __future__ import annotations

import argparse
import sys


def _device(backend: str | None):
    """The Autodiff device over the chosen backend; prints which backend and device run."""
    from burn_autodiff import Autodiff
    from burn_tensor import resolve_backend

    _, inner, line = resolve_backend(backend)
    print(line, flush=True)
    return Autodiff(inner).device()


def build_parser() -> argparse.ArgumentParser:
    """The `xor` command line: `train` and `infer` subcommands."""
    from burn_tensor import add_backend_argument

    parser = argparse.ArgumentParser(prog="xor", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="{train,infer}")
    helps = {
        "train": "train the XOR model to 100%% accuracy, save it, print its predictions",
        "infer": "load the saved model (a fresh process) and print its predictions and accuracy",
    }
    for name, text in helps.items():
        # help is %-formatted by argparse, description is not
        p = sub.add_parser(name, help=text, description=text.replace("%%", "%"))
        p.add_argument(
            "--artifact-dir",
            default="artifacts/xor",
            help="folder for config.json and the model record (default: %(default)s)",
        )
        add_backend_argument(p, autodiff=True)
    t = sub.choices["train"]
    t.add_argument(
        "--epochs", type=int, default=None, help="maximum number of epochs (default: 50)"
    )
    t.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed for parameter initialization and shuffling (default: 42)",
    )
    t.add_argument(
        "--no-early-stopping",
        action="store_true",
        help="train every epoch instead of stopping once validation accuracy is 100%%",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a command; a backend error is one line on stderr and exit 2."""
    args = build_parser().parse_args(argv)
    from burn_tensor import BackendError

    try:
        return _run(args)
    except BackendError as e:
        print(f"xor: error: {e}", file=sys.stderr)
        return 2


def _run(args) -> int:
    from .inference import accuracy, load_model, predict

    device = _device(args.backend)
    if args.command == "train":
        from burn_optim import AdamConfig

        from .model import XorModelConfig
        from .training import TrainingConfig, train

        config = TrainingConfig(XorModelConfig(), AdamConfig())
        if args.epochs is not None:
            config = config.with_num_epochs(args.epochs)
        if args.seed is not None:
            config = config.with_seed(args.seed)
        if args.no_early_stopping:
            config = config.with_early_stopping(False)
        result = train(args.artifact_dir, config, device)
        predictions, acc = result.predictions, result.accuracy
        print(f"Model saved to {args.artifact_dir}/model.mpk.gz")
    else:
        model = load_model(args.artifact_dir, device.inner())
        predictions = predict(model, device.inner())
        acc = accuracy(predictions)
    print(f"Predictions (should be 0, 1, 1, 0): {predictions}")
    print(f"Accuracy: {acc:.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
