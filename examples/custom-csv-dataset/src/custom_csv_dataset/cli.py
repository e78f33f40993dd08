"""`custom-csv-dataset`: load the diabetes table and print its first and last rows."""

from __future__ import annotations

import argparse
import sys
import tempfile


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="custom-csv-dataset", description=__doc__)
    parser.add_argument(
        "--file", default=None, help="a local diabetes.tab.txt (default: download and cache it)"
    )
    parser.add_argument(
        "--synthetic", action="store_true",
        help="use a generated stand-in with the same columns (offline runs, CI)",
    )  # fmt: skip
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from burn_dataset import DownloadError

    from .dataset import DiabetesDataset, write_synthetic

    path = args.file
    if args.synthetic:
        path = write_synthetic(tempfile.mkdtemp() + "/diabetes.tab.txt")
    try:
        dataset = DiabetesDataset(path)
    except (DownloadError, FileNotFoundError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"Dataset loaded with {len(dataset)} rows")
    print(f"First item:\n{dataset.get(0)}")
    print(f"Last item:\n{dataset.get(len(dataset) - 1)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
