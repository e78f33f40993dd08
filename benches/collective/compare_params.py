"""Largest absolute difference between two parameter files of `dp_throughput.py --save-params`
(e.g. sharded optimizer state against plain data parallel after the same steps).

    python benches/collective/compare_params.py A.npz B.npz [--tol 1e-6]

Prints one JSON line {"max_abs_diff": ..., "worst": name, "within": bool}; exits 1 when the
files hold different parameters or the difference exceeds --tol.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--tol", type=float, default=1e-6)
    args = parser.parse_args(argv)
    a, b = dict(np.load(args.a)), dict(np.load(args.b))
    if a.keys() != b.keys():
        print(f"compare_params: different parameters: {sorted(a.keys() ^ b.keys())}",
              file=sys.stderr)  # fmt: skip
        return 1
    diffs = {k: float(np.max(np.abs(a[k].astype(np.float64) - b[k]))) for k in a}
    worst = max(diffs, key=diffs.get)
    within = diffs[worst] <= args.tol
    print(json.dumps({"max_abs_diff": diffs[worst], "worst": worst, "within": within}))
    return 0 if within else 1


if __name__ == "__main__":
    raise SystemExit(main())
