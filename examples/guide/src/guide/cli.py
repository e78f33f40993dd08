"""`guide train` / `guide infer`: the book's guide from the command line."""

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


QUICK_SUFFIX = "-quick"


def _datasets(name: str):
    if name == "digits":
        from burn_dataset.vision import DigitsDataset

        return DigitsDataset.train(), DigitsDataset.test()
    from burn_dataset.vision import MnistDataset

    return MnistDataset.train(), MnistDataset.test()


def build_parser() -> argparse.ArgumentParser:
    """The `guide` command line: `train` and `infer` subcommands."""
    from burn_tensor import add_backend_argument

    parser = argparse.ArgumentParser(prog="guide", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="{train,infer}")
    helps = {
        "train": "train the guide's conv net with the Learner (live dashboard on a terminal) and "
        "save config.json and the model record in the artifact dir",
        "infer": "load the trained model from the artifact dir and print 'Predicted X Expected Y' "
        "for the first test items",
    }
    for name, text in helps.items():
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument(
            "--artifact-dir",
            default="artifacts/guide",
            help="folder for config.json, the model record, checkpoints and logs "
            "(default: %(default)s)",
        )
        add_backend_argument(p, autodiff=True)
        p.add_argument(
            "--dataset",
            choices=["digits", "mnist"],
            default="digits",
            help="digits: the digits bundled with burn-dataset, upscaled to 28x28 (offline); mnist: MNIST, "
            "downloaded into the cache when missing (default: %(default)s)",
        )
    t = sub.choices["train"]
    t.add_argument(
        "--epochs", type=int, default=None, help="number of epochs (default: the config's, 12)"
    )
    t.add_argument(
        "--limit",
        type=int,
        default=None,
        help="use only the first N items (a quick run: with --limit or --epochs and no "
        f"--artifact-dir, it writes to <artifact-dir>{QUICK_SUFFIX}, not over the trained model)",
    )
    t.add_argument(
        "--capture",
        action="store_true",
        help="run each training step as a captured step (LearnerBuilder.capture(); a fusion "
        "backend: --backend fusion-opencl or fusion-cuda)",
    )
    sub.choices["infer"].add_argument(
        "--count", type=int, default=10, help="how many test items to predict (default: 10)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a command; a user error (backend, missing model) is one line on stderr and exit 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    from burn_tensor import BackendError

    try:
        return _run(parser, args, argv)
    except (BackendError, _NotTrained) as e:
        print(f"guide: error: {e}", file=sys.stderr)
        return 2


class _NotTrained(Exception):
    pass


def _run(parser, args, argv) -> int:
    from pathlib import Path

    from burn_dataset.transform import PartialDataset

    from .training import TrainingConfig

    given = sys.argv[1:] if argv is None else argv
    explicit_dir = any(a == "--artifact-dir" or a.startswith("--artifact-dir=") for a in given)
    if args.command == "train" and not explicit_dir and (args.limit or args.epochs):
        args.artifact_dir += QUICK_SUFFIX
    if args.command == "infer" and not (Path(args.artifact_dir) / "config.json").exists():
        raise _NotTrained(
            f"no trained model in {args.artifact_dir}: run `guide train` first "
            "(or pass the --artifact-dir a training run wrote)"
        )
    device = _device(args.backend)
    train_set, test_set = _datasets(args.dataset)
    if args.command == "train":
        from burn_optim import AdamConfig

        from .model import ModelConfig
        from .training import train

        config = TrainingConfig(ModelConfig(10, 512), AdamConfig())
        if args.epochs is not None:
            config = config.with_num_epochs(args.epochs)
        if args.limit is not None:
            train_set = PartialDataset(train_set, 0, min(args.limit, len(train_set)))
            test_set = PartialDataset(test_set, 0, min(args.limit, len(test_set)))
        train(args.artifact_dir, config, device, train_set, test_set, capture=args.capture)
        print(f"model, config and logs saved in {args.artifact_dir}")
        return 0

    from .inference import infer, load_model

    inner = device.inner()
    model = load_model(args.artifact_dir, inner)
    correct = 0
    for i in range(min(args.count, len(test_set))):
        item = test_set.get(i)
        correct += int(infer(args.artifact_dir, inner, item, model) == item.label)
    print(f"{correct}/{min(args.count, len(test_set))} correct")
    return 0


if __name__ == "__main__":
    sys.exit(main())
