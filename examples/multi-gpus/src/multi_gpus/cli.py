"""`multi-gpus`: train the guide's model data-parallel over several devices."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    from burn_tensor import add_backend_argument

    parser = argparse.ArgumentParser(prog="multi-gpus", description=__doc__)
    parser.add_argument(
        "--devices", type=int, default=2,
        help="devices of this process to train on, one thread each (NdArray: logical CPU devices)",
    )  # fmt: skip
    parser.add_argument(
        "--ddp", action="store_true",
        help="one process per device: run under `python -m burn_train.launch --nproc-per-node N`",
    )  # fmt: skip
    parser.add_argument("--epochs", type=int, default=3, help="number of epochs")
    parser.add_argument("--limit", type=int, default=None, help="use the first N digits")
    parser.add_argument(
        "--artifact-dir", default="artifacts/multi-gpus", help="logs, checkpoints (rank 0 writes)"
    )
    add_backend_argument(parser, autodiff=True)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.devices < 1 or args.epochs < 1:
        print("error: --devices and --epochs must be >= 1", file=sys.stderr)
        return 2
    from burn_autodiff import Autodiff
    from burn_dataset import PartialDataset
    from burn_dataset.vision import DigitsDataset
    from burn_tensor import resolve_backend

    from multi_gpus.training import MultiGpusConfig, run  # absolute: the launcher runs this file

    name, inner, line = resolve_backend(args.backend)
    print(line, flush=True)
    if args.ddp:
        devices = [Autodiff(inner).device()]  # this rank's device: the launcher binds it
    else:
        if name == "ndarray" and args.devices > 1:
            from burn_ndarray import NdArray

            inner = NdArray(num_devices=args.devices)
        backend = Autodiff(inner)
        if backend.device_count() < args.devices:
            print(f"error: --devices {args.devices}: {name} has {backend.device_count()}",
                  file=sys.stderr)  # fmt: skip
            return 2
        devices = [backend.device(i) for i in range(args.devices)]
    train, valid = DigitsDataset.train(), DigitsDataset.test()
    if args.limit is not None:
        train = PartialDataset(train, 0, min(args.limit, len(train)))
        valid = PartialDataset(valid, 0, min(args.limit // 4 + 1, len(valid)))
    cfg = MultiGpusConfig(num_epochs=args.epochs)
    try:
        result = run(devices, train, valid, args.artifact_dir, cfg, ddp=args.ddp)
    except RuntimeError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"trained on {len(devices)} device(s); epochs {result.learner.epochs_completed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
