"""Issue 35: where a captured step's time goes on the GPU, beside the same step eager.

    python benches/probes/capture_profile.py [--rows transformer,guide1024] [--steps 3] [--top 15]

For each row of `benches/training_step` (the transformer without dropout, guide batch 1024 / 64)
on `Autodiff(Fusion(Cuda()))`, eager and captured (`burn_fusion.capture`, after enough calls to
replay): the wall ms per step, the GPU's busy ms per step, kernel launches, copies and memsets
per step (`torch.profiler`, whose CUPTI records cupy's kernels and graph nodes), the top
kernels by GPU time, and a cProfile of the host per step (top functions by own time). A captured
step slower than eager shows here as more GPU time (other kernels, copies) or as host time.
Needs cupy, a CUDA GPU and torch built with CUDA.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="transformer,guide1024,guide64",
                    help="comma list of transformer, guide1024, guide64")  # fmt: skip
    ap.add_argument("--steps", type=int, default=3, help="profiled steps")
    ap.add_argument("--top", type=int, default=15, help="kernels and functions listed")
    return ap


def _row(name: str, device, capture: bool):
    from benches.training_step import _rows

    if name == "transformer":
        return _rows.transformer_train(device, "full", capture=capture)
    return _rows.guide_train(device, int(name.removeprefix("guide")), capture=capture)


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    import cupy as cp
    import torch
    from burn_autodiff import Autodiff
    from burn_tensor import get_backend

    from benches.probes.gpu_kernels import kernel_table

    sync = cp.cuda.Device().synchronize
    for name in [r.strip() for r in args.rows.split(",") if r.strip()]:
        for capture in (False, True):
            dev = Autodiff(get_backend("fusion-cuda")).device()
            row = _row(name, dev, capture)
            for _ in range(8):  # a captured step replays from its 5th call
                row.step()
            sync()
            t = time.perf_counter()
            for _ in range(10):
                row.step()
            sync()
            wall = (time.perf_counter() - t) / 10 * 1e3
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
                for _ in range(args.steps):
                    row.step()
                sync()
            tab = kernel_table(p, args.steps)
            label = f"{name} {'captured' if capture else 'eager'}"
            print(f"== {label}: wall {wall:.2f} ms/step, GPU busy {tab['busy_ms']:.2f} ms/step, "
                  f"kernels {tab['kernels_per_step']:.0f}, copies {tab['copies_per_step']:.0f}, "
                  f"memsets {tab['memsets_per_step']:.0f} per step")  # fmt: skip
            for k, ms, n in tab["kernels"][: args.top]:
                print(f"  {ms:8.3f} ms {n:5d}x  {k}")
            print(f"  GPU span {tab['span_ms']:.2f} ms/step, idle {tab['idle_ms']:.2f} ms in "
                  f"{tab['gaps_per_step']:.0f} gaps >= 2 us; largest by pair:")  # fmt: skip
            for k, ms, n in tab["gap_pairs"]:
                print(f"  {ms:8.3f} ms {n:7.1f}x  {k}")
            pr = cProfile.Profile()
            pr.enable()
            for _ in range(args.steps):
                row.step()
            sync()
            pr.disable()
            st = pstats.Stats(pr)
            print(f"  host: {sum(v[1] for v in st.stats.values()) // args.steps} Python calls "
                  "per step; top by own time:")  # fmt: skip
            st.sort_stats("tottime").print_stats(args.top)
            s = getattr(row.state.get("captured"), "stats", None)
            if s is not None:
                print("  capture stats:", s())
            sys.stdout.flush()


if __name__ == "__main__":
    main()
