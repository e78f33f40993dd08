"""`tutorial N` runs exercise N (1-11) of the Burn foundations tutorial; `tutorial all` runs all."""

from __future__ import annotations

import argparse
import importlib
import sys

from . import EXERCISES


def run_exercise(number: int):
    """Import `tutorial.exercise_NN` and call its `run()`; returns what `run()` returns."""
    module = importlib.import_module(f"tutorial.exercise_{number:02d}")
    return module.run()


def build_parser() -> argparse.ArgumentParser:
    """The `tutorial` command line."""
    parser = argparse.ArgumentParser(prog="tutorial", description=__doc__)
    parser.add_argument("exercise", help="an exercise number (1-11) or 'all'")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.exercise == "all":
        numbers = list(EXERCISES)
    else:
        try:
            numbers = [int(args.exercise)]
        except ValueError:
            parser.error(f"expected a number 1-11 or 'all', got {args.exercise!r}")
        if numbers[0] not in EXERCISES:
            parser.error(f"no exercise {numbers[0]}: the tutorial has exercises 1-11")
    for number in numbers:
        print(f"=== Exercise {number} ===")
        run_exercise(number)
    return 0


if __name__ == "__main__":
    sys.exit(main())
