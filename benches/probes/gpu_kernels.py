"""Where the GPU time of the transformer step goes: burn's kernels beside torch's, per kernel.

    python benches/probes/gpu_kernels.py [--modes fp32,"bf16 pure"] [--steps 3] [--top 25]
        [--size gpu] [--json FILE]

Issues 34, 35 and 36 share one step (`benches/suites/transformer_precision.py`: d_model 512,
6 pre-norm layers, 8 heads, batch 32 x 128, Adam). For each mode, burn on
`Autodiff(Cuda(...))` and torch eager run 3 warm-up steps, then `--steps` steps under
`torch.profiler` (CUPTI records every kernel of the process, cupy's too, since both runtimes
share the device's primary context). Printed per side: the wall ms per step, the GPU's busy ms
per step (kernels + copies + memsets), the kernel launches per step, and the top kernels by
GPU ms per step. Busy well below wall means the step is host bound (issue 35's capture is the
lever); busy above torch's names the kernels to write (issues 34 and 36).
Needs cupy, a CUDA GPU and torch built with CUDA.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modes", default="fp32,bf16 pure,bf16 mixed",
                    help="comma-separated modes of transformer_precision")  # fmt: skip
    ap.add_argument("--steps", type=int, default=3, help="profiled steps")
    ap.add_argument("--top", type=int, default=25, help="kernels listed per side")
    ap.add_argument("--size", default="gpu", help="gpu, cpu or quick (transformer_precision)")
    ap.add_argument("--json", type=Path, default=None, help="write the tables here")
    return ap


def _gpu_events(trace: Path) -> list[dict]:
    """The device-side events (kernels, copies, memsets) of a chrome trace."""
    with open(trace) as f:
        events = json.load(f).get("traceEvents", [])
    cats = ("kernel", "gpu_memcpy", "gpu_memset")
    return [e for e in events if e.get("cat") in cats and "dur" in e]


def _profile(torch, step, sync, steps: int) -> dict:
    for _ in range(3):
        step()
    sync()
    t = time.perf_counter()
    for _ in range(steps):
        step()
    sync()
    wall = (time.perf_counter() - t) / steps
    acts = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(steps):
            step()
        sync()
    table = kernel_table(prof, steps)
    table["wall_ms"] = wall * 1e3
    return table


def kernel_table(prof, steps: int) -> dict:
    """What `prof` (a finished torch.profiler run of `steps` steps) saw on the GPU: busy ms per
    step, kernels / copies / memsets per step, and [name, ms per step, calls per step] rows by
    GPU time (copies and memsets as one row each). `capture_profile.py` reads the same table."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "trace.json"
        prof.export_chrome_trace(str(path))
        events = _gpu_events(path)
    per = collections.defaultdict(lambda: [0.0, 0])
    for e in events:
        name = e["name"] if e["cat"] == "kernel" else e["cat"]
        per[name[:90]][0] += e["dur"] / 1e3 / steps
        per[name[:90]][1] += 1
    counts = {c: sum(1 for e in events if e["cat"] == c) / steps
              for c in ("kernel", "gpu_memcpy", "gpu_memset")}  # fmt: skip
    return {**idle_gaps(events, steps), "busy_ms": sum(v[0] for v in per.values()),
            "kernels_per_step": counts["kernel"],
            "copies_per_step": counts["gpu_memcpy"], "memsets_per_step": counts["gpu_memset"],
            "kernels": sorted(([k, v[0], v[1] // steps] for k, v in per.items()),
                              key=lambda r: -r[1])}  # fmt: skip


def idle_gaps(events: list[dict], steps: int, top: int = 8) -> dict:
    """Where the GPU sat idle between the first and the last event: `span_ms` and `idle_ms` per
    step, the gaps of >= 2 us per step, and the `top` (event before, event after) pairs by idle
    ms per step (a gap after a step's last kernel, before the next step's first, is the host)."""
    evs = sorted(events, key=lambda e: e["ts"])
    if not evs:
        return {"span_ms": 0.0, "idle_ms": 0.0, "gaps_per_step": 0, "gap_pairs": []}
    end = evs[0]["ts"] + evs[0]["dur"]
    prev = evs[0]["name"]
    idle, n = 0.0, 0
    pairs = collections.defaultdict(lambda: [0.0, 0])
    for e in evs[1:]:
        gap = e["ts"] - end
        if gap >= 2.0:  # us
            idle += gap
            n += 1
            key = f"{prev[:40]} -> {e['name'][:40]}"
            pairs[key][0] += gap / 1e3 / steps
            pairs[key][1] += 1
        if e["ts"] + e["dur"] > end:
            end, prev = e["ts"] + e["dur"], e["name"]
    span = (end - evs[0]["ts"]) / 1e3 / steps
    rows = sorted(([k, v[0], v[1] / steps] for k, v in pairs.items()), key=lambda r: -r[1])
    return {"span_ms": span, "idle_ms": idle / 1e3 / steps, "gaps_per_step": n / steps,
            "gap_pairs": rows[:top]}  # fmt: skip


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import cupy as cp
    import torch
    from burn_autodiff import Autodiff
    from burn_tensor import get_backend

    from benches.suites import transformer_precision as tp

    size = tp.SIZES[args.size]
    tokens, targets = tp._data(size)
    results = {}
    for mode in [m.strip() for m in args.modes.split(",") if m.strip()]:
        cuda = get_backend("cuda")
        inner = tp.with_float_dtype(cuda, "bfloat16") if mode == "bf16 pure" else cuda
        dev = Autodiff(inner).device()
        burn = tp._burn_step(dev, size, tokens, targets, mixed=mode == "bf16 mixed")
        ref = tp._torch_step(torch, size, tokens, targets, "cuda", mode)
        sides = {
            "burn": _profile(torch, burn, cp.cuda.Device().synchronize, args.steps),
            "torch": _profile(torch, ref, torch.cuda.synchronize, args.steps),
        }
        results[mode] = sides
        for side, r in sides.items():
            print(f"== {mode} / {side}: wall {r['wall_ms']:.2f} ms/step, GPU busy "
                  f"{r['busy_ms']:.2f} ms/step, {r['kernels_per_step']:.0f} kernels/step")
            for name, ms, n in r["kernels"][: args.top]:
                print(f"  {ms:8.3f} ms {n:5d}x  {name}")
        print(flush=True)
    print("| mode | burn wall | burn GPU busy | burn kernels | torch wall | torch GPU busy |")
    print("|---|---|---|---|---|---|")
    for mode, s in results.items():
        b, t = s["burn"], s["torch"]
        print(f"| {mode} | {b['wall_ms']:.2f} | {b['busy_ms']:.2f} | {b['kernels_per_step']:.0f}"
              f" | {t['wall_ms']:.2f} | {t['busy_ms']:.2f} |")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
