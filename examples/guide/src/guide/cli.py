"""`guide train` / `guide infer`: the book's guide from the command line."""

from __future__ import annotations

import argparse
import sys


def _device(backend: str):
    from burn_autodiff import Autodiff
    from burn_tensor import get_backend

    return Autodiff(get_backend(backend)).device()


def _datasets(name: str):
    if name == "digits":
        from burn_dataset.vision import DigitsDataset

        return DigitsDataset.train(), DigitsDataset.test()
    from burn_dataset.vision import MnistDataset

    return MnistDataset.train(), MnistDataset.test()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="guide", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("train", "infer"):
        p = sub.add_parser(name)
        p.add_argument("--artifact-dir", default="artifacts/guide")
        p.add_argument(
            "--backend", default="ndarray", help="backend entry-point name (ndarray, ...)"
        )
        p.add_argument("--dataset", choices=["digits", "mnist"], default="digits")
    t = sub.choices["train"]
    t.add_argument("--epochs", type=int, default=None)
    t.add_argument(
        "--limit", type=int, default=None, help="use only the first N items (quick runs)"
    )
    sub.choices["infer"].add_argument("--count", type=int, default=10)
    args = parser.parse_args(argv)

    from burn_dataset.transform import PartialDataset

    from .training import TrainingConfig

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
        train(args.artifact_dir, config, device, train_set, test_set)
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
