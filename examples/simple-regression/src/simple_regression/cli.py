"""`simple-regression train` / `simple-regression infer`: Burn's simple-regression example."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    """The `simple-regression` command line: `train` and `infer` subcommands."""
    from burn_tensor import add_backend_argument

    parser = argparse.ArgumentParser(prog="simple-regression", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="{train,infer}")
    helps = {
        "train": "train the regression model on the bundled housing data with the Learner and "
        "save it in the artifact dir",
        "infer": "load the trained model and print the mean squared error on test items",
    }
    for name, text in helps.items():
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument(
            "--artifact-dir",
            default="artifacts/simple-regression",
            help="folder for config.json, the model record and logs (default: %(default)s)",
        )
        add_backend_argument(p, autodiff=True)
    t = sub.choices["train"]
    t.add_argument(
        "--epochs", type=int, default=None, help="number of epochs (default: the config's, 100)"
    )
    t.add_argument(
        "--limit", type=int, default=None, help="use only the first N items of each split"
    )
    sub.choices["infer"].add_argument(
        "--count", type=int, default=8, help="how many test items to predict (default: 8)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a command; a backend error is one line on stderr and exit 2."""
    args = build_parser().parse_args(argv)
    from burn_tensor import BackendError

    try:
        return _run(args)
    except BackendError as e:
        print(f"simple-regression: error: {e}", file=sys.stderr)
        return 2


def _run(args) -> int:
    from burn_autodiff import Autodiff
    from burn_dataset import PartialDataset
    from burn_tensor import resolve_backend

    from .dataset import HousingDataset

    _, inner, line = resolve_backend(args.backend)
    print(line, flush=True)
    device = Autodiff(inner).device()
    if args.command == "train":
        from burn_optim import AdamConfig

        from .model import RegressionModelConfig
        from .training import ExpConfig, run

        config = ExpConfig(RegressionModelConfig(), AdamConfig())
        if args.epochs is not None:
            config = config.with_num_epochs(args.epochs)
        train_set, valid_set = HousingDataset.train(), HousingDataset.validation()
        if args.limit is not None:
            train_set = PartialDataset(train_set, 0, min(args.limit, len(train_set)))
            valid_set = PartialDataset(valid_set, 0, min(args.limit, len(valid_set)))
        run(args.artifact_dir, config, device, train_set, valid_set)
        return 0

    from .inference import infer

    test_set = HousingDataset.test()
    items = [test_set.get(i) for i in range(min(args.count, len(test_set)))]
    pairs = infer(args.artifact_dir, device.inner(), items)
    mse = sum((p - e) ** 2 for p, e in pairs) / len(pairs)
    print(f"MSE on {len(pairs)} test items: {mse:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
