"""`custom-image-dataset`: train the CIFAR-10 CNN on images in class folders."""

from __future__ import annotations

import argparse
import sys
import tempfile

CIFAR10_PNG_URL = "https://s3.amazonaws.com/fast-ai-sample/cifar10.tgz"


def build_parser() -> argparse.ArgumentParser:
    from burn_tensor import add_backend_argument

    parser = argparse.ArgumentParser(prog="custom-image-dataset", description=__doc__)
    parser.add_argument(
        "--root", default=None,
        help=f"a folder with train/ and test/ class folders (e.g. {CIFAR10_PNG_URL} extracted)",
    )  # fmt: skip
    parser.add_argument(
        "--generate", type=int, default=None, metavar="N",
        help="instead, generate N training and N/4 test images per class (offline, CI)",
    )  # fmt: skip
    parser.add_argument("--epochs", type=int, default=30, help="number of epochs (Burn: 30)")
    parser.add_argument("--batch-size", type=int, default=128, help="batch size (Burn: 128)")
    parser.add_argument("--lr", type=float, default=0.02, help="SGD learning rate (Burn: 0.02)")
    parser.add_argument(
        "--cosine", action="store_true",
        help="anneal the rate from --lr to 0 over the run (cosine) instead of Burn's constant rate",
    )  # fmt: skip
    parser.add_argument(
        "--artifact-dir", default="artifacts/custom-image-dataset", help="logs, checkpoints, model"
    )
    add_backend_argument(parser, autodiff=True)
    return parser


def learning_rate(lr: float, cosine: bool, epochs: int, batches_per_epoch: int):
    """Burn's constant `lr`, or with `cosine` a scheduler annealing from `lr` toward 0 over the
    run's `epochs * batches_per_epoch` iterations (the Learner steps it once each)."""
    if not cosine:
        return lr
    from burn_optim.lr_scheduler import CosineAnnealingLrSchedulerConfig

    return CosineAnnealingLrSchedulerConfig(lr, num_iters=epochs * batches_per_epoch).init()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if (args.root is None) == (args.generate is None):
        print(
            "error: pass --root DIR (an image folder with train/ and test/, e.g. fast.ai's "
            f"CIFAR-10 from {CIFAR10_PNG_URL}) or --generate N",
            file=sys.stderr,
        )
        return 2
    if args.epochs < 1 or (args.generate is not None and args.generate < 4):
        print("error: --epochs must be >= 1 and --generate >= 4", file=sys.stderr)
        return 2
    from pathlib import Path

    from burn_autodiff import Autodiff
    from burn_dataset.vision import ImageFolderDataset
    from burn_tensor import resolve_backend

    from .data import generate_image_folder
    from .training import run

    root = Path(args.root) if args.root else Path(tempfile.mkdtemp())
    if args.generate is not None:
        generate_image_folder(root / "train", args.generate, seed=0)
        generate_image_folder(root / "test", max(args.generate // 4, 1), seed=1)
    try:
        train = ImageFolderDataset.new_classification(root / "train")
        test = ImageFolderDataset.new_classification(root / "test")
    except (FileNotFoundError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    _, inner, line = resolve_backend(args.backend)
    print(line, flush=True)
    print(f"{len(train)} train and {len(test)} test images in {len(train.classes)} classes")
    lr = learning_rate(args.lr, args.cosine, args.epochs, -(-len(train) // args.batch_size))
    result = run(Autodiff(inner).device(), train, test, len(train.classes), args.artifact_dir,
                 args.epochs, args.batch_size, lr)  # fmt: skip
    print(f"epochs {result.learner.epochs_completed}; model in {args.artifact_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
