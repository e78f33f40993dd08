"""Per-op host cost on tiny tensors: `python -m benches.training_step.per_op`.

For each backend (plain and under Autodiff with a tensor that requires grad) it times chains of
elementwise ops on 16 float32 elements: `--chain` ops (`t * 1.0001 + t`, alternating), then the
device's sync, the minimum over `--reps` chains divided by the op count. On Fusion a chain is
one plan (recording, then one flush: planning, the plan-cache lookup, one launch); on the other
backends each op is a launch. The minimum (not the median) because this machine's other work
only ever adds time. JSON to `--out`.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from pathlib import Path


def chain_us(device, chain: int, reps: int, grad: bool) -> float:
    from burn_tensor import Tensor

    x = Tensor.from_data([float(i) for i in range(16)], device)
    if grad:
        x = x.require_grad()
    best = float("inf")
    gc.disable()
    try:
        for _ in range(reps):
            t0 = time.perf_counter()
            t = x
            for i in range(chain // 2):
                t = t * 1.0001
                t = t + x
            device.sync()
            best = min(best, time.perf_counter() - t0)
    finally:
        gc.enable()
    return 1e6 * best / chain


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--backends", default="ndarray,opencl,fusion-opencl", help="comma list of registry names"
    )
    ap.add_argument("--chain", type=int, default=32, help="ops per chain (default: 32)")
    ap.add_argument("--reps", type=int, default=200, help="chains timed (the minimum is kept)")
    ap.add_argument("--out", type=Path, default=None, help="JSON file (default: none)")
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    from burn_autodiff import Autodiff
    from burn_tensor.backend import get_backend

    out = {}
    for name in args.backends.split(","):
        b = get_backend(name)
        plain = chain_us(b.device(), args.chain, args.reps, False)
        ad = chain_us(Autodiff(b).device(), args.chain, args.reps, True)
        out[name] = {"us_per_op": plain, "autodiff_us_per_op": ad}
        print(f"{name:16s} {plain:7.2f} us/op   Autodiff, requires grad: {ad:7.2f} us/op")
    if args.out:
        args.out.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
