"""A batch-of-one `linear` (a classifier's [1, k] @ [k, n]) on NdArray against numpy's GEMV and,
when importable, torch's `F.linear`, one thread each, in one process (JSON on stdout).

    python benches/probes/one_row_linear.py [--k 1024] [--n 1000] [--runs 25]

Why a probe: NdArray's tiled GEMM sent the row to OpenBLAS's GEMM, which packed the whole
weight for it (~4x numpy's GEMV at 1024 x 1000, 207 against 52 us); `gemm.c` now runs one-row
tiles as its own GEMV. CPU time (`time.process_time`, the fewest of `--runs` calls) so another
process's load moves the figure less than wall time would.
"""

from __future__ import annotations

import argparse
import json
import os
import time


def build_parser() -> argparse.ArgumentParser:
    """The probe's command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--k", type=int, default=1024, help="input features")
    p.add_argument("--n", type=int, default=1000, help="output features")
    p.add_argument("--runs", type=int, default=25, help="timed calls per side (fewest reported)")
    return p


def _cpu_us(fn, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best * 1e6


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    import numpy as np
    from burn_ndarray import NdArray

    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, args.k)).astype(np.float32)
    w = rng.standard_normal((args.k, args.n)).astype(np.float32)
    b = rng.standard_normal(args.n).astype(np.float32)
    nd = NdArray(num_threads=1)
    row = {"k": args.k, "n": args.n,
           "ndarray_us": _cpu_us(lambda: nd.linear(x, w, b), args.runs),
           "numpy_us": _cpu_us(lambda: np.dot(x, w) + b, args.runs)}  # fmt: skip
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
        tx, tw, tb = (torch.from_numpy(a) for a in (x, np.ascontiguousarray(w.T), b))
        row["torch_us"] = _cpu_us(lambda: torch.nn.functional.linear(tx, tw, tb), args.runs)
    row["ndarray_vs_numpy"] = row["ndarray_us"] / row["numpy_us"]
    print(json.dumps(row))


if __name__ == "__main__":
    main()
