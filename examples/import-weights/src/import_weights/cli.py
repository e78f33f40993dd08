"""`import-weights`: evaluate the PyTorch-trained digits model in burn-py, from .pt and .safetensors."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="import-weights", description=__doc__)
    parser.add_argument("--weights", default=None, help="folder with digits_net.pt/.safetensors")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    from burn_ndarray import NdArray

    from .evaluate import WEIGHTS, evaluate, torch_result

    folder = Path(args.weights) if args.weights else WEIGHTS
    device = NdArray().device()
    reference = torch_result(folder)
    print(
        f"PyTorch {reference['torch']}: {reference['correct']}/{reference['total']} "
        f"= {reference['accuracy']:.2f} % on the digits test split"
    )
    status = 0
    for name in ("digits_net.pt", "digits_net.safetensors"):
        result = evaluate(folder / name, device)
        same = result.predictions == reference["predictions"]
        print(
            f"burn-py from {name:24s}: {result.correct}/{result.total} = {result.accuracy:.2f} %"
            f" ({'same predictions as PyTorch' if same else 'PREDICTIONS DIFFER'})"
        )
        status |= 0 if same else 1
    return status


if __name__ == "__main__":
    sys.exit(main())
