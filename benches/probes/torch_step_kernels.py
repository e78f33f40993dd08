"""Issue 35: torch's GPU kernels for a `benches/training_step` row, beside `capture_profile.py`.

    python benches/probes/torch_step_kernels.py [--row transformer] [--mode eager] [--top 25]

`capture_profile.py` lists burn's kernels per step; this lists torch's for the same step (the
`_torch.steps` column: eager, compiled or CUDA graph), through `torch.profiler`: GPU busy ms per
step and the top kernels by GPU time. Session 19 used it to ask whether burn's fp32 GEMMs run the
same cuBLAS kernels as torch's (burn's captured transformer step spent ~4 ms a step in cutlass
`align1` SIMT kernels). Needs torch built with CUDA and a GPU.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build_parser() -> argparse.ArgumentParser:
    """The probe's command line (tests/test_cli_help.py checks every option has help)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--row", default="transformer", help="transformer, guide64 or guide1024")
    ap.add_argument(
        "--mode", default="torch eager",
        help="the _torch.steps column: 'torch eager', 'torch.compile' or 'torch cuda graph'",
    )  # fmt: skip
    ap.add_argument("--steps", type=int, default=3, help="profiled steps (default 3)")
    ap.add_argument("--top", type=int, default=25, help="kernels listed (default 25)")
    return ap


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    sys.path.insert(0, str(ROOT))
    import numpy as np
    import torch

    from benches.training_step import _rows, _torch

    if args.row == "transformer":
        d_model, layers, batch, seq = _rows.TRANSFORMER["full"]
        rng = np.random.default_rng(0)
        x = rng.integers(0, _rows.VOCAB, size=(batch, seq)).astype("int64")
        y = rng.integers(0, _rows.NUM_CLASSES, size=batch).astype("int64")
        fns = _torch.steps(torch, _torch.transformer_model(torch, d_model, layers), x, y, "cuda")
    else:
        x, y = _rows.guide_data({"guide64": 64, "guide1024": 1024}[args.row])
        fns = _torch.steps(torch, _torch.guide_model(torch, None), x, y, "cuda")
    if args.mode not in fns:
        raise SystemExit(f"torch_step_kernels: --mode must be one of {sorted(fns)}")
    step = fns[args.mode]
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(args.steps):
            step()
        torch.cuda.synchronize()
    per = defaultdict(lambda: [0.0, 0])
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            per[e.name][0] += e.device_time_total / 1e3
            per[e.name][1] += 1
    busy = sum(v[0] for v in per.values()) / args.steps
    print(f"== torch {args.mode}, {args.row}: GPU busy {busy:.2f} ms/step, "
          f"{sum(v[1] for v in per.values()) // args.steps} kernels per step")  # fmt: skip
    for name, (ms, n) in sorted(per.items(), key=lambda i: -i[1][0])[: args.top]:
        print(f"  {ms / args.steps:8.3f} ms {n // args.steps:5d}x  {name[:100]}")


if __name__ == "__main__":
    main()
