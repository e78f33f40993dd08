"""Issue 36: why the H200's `Autodiff(Cuda())` transformer step is 15.4 ms in some processes and
21.4 ms in others (session 19: 8 runs vs 2, the same command).

    python benches/probes/step_modes.py [--procs 6] [--row transformer] [--backend cuda]
                                        [--env BURN_CUDA_LT=0] [--steps 20]

Runs the `benches/training_step` row in `--procs` fresh processes, process i with
PYTHONHASHSEED=i (so a mode that follows string hashing, i.e. dict/set order, repeats by seed),
(or `--seeds 0,0,1,1`: each seed twice, to see whether a mode repeats with its seed), and
prints per process, medians over `--steps` steps after 5 warm-up:

- wall: the step with the sync after it (what the bench reports);
- launch: until `step()` returned, before the sync (the host's Python and launches);
- cpu: the main thread's CPU time over the same span (launch - cpu = time the thread was not
  running: waits inside the step, GIL hand-offs, descheduling);
- gpu: the stream's span between an event recorded before the step and one after it (GPU time
  including its idle gaps);
- the SM / memory clocks and power `nvidia-smi` reports after the process (clock-down shows).

A host-bound mode has launch ~ wall and gpu ~ wall; a GPU-bound one launch < gpu ~ wall. The
table is printed last; JSON lines to `--out` when given.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", type=int, default=6, help="fresh processes (hash seeds 0..n-1)")
    ap.add_argument("--seeds", default=None, help="comma list of hash seeds (repeats allowed)")
    ap.add_argument("--profile", type=int, default=0,
                    help="also print each process's top-N functions by own time (3 steps)")  # fmt: skip
    ap.add_argument("--row", default="transformer", help="a benches/training_step row")
    ap.add_argument("--backend", default="cuda", help="burn backend name (wrapped in Autodiff)")
    ap.add_argument("--steps", type=int, default=20, help="timed steps per process")
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for the children")
    ap.add_argument("--kernels", type=int, default=0,
                    help="also profile 3 steps with torch.profiler after the timing (imports "
                    "torch): GPU busy / idle ms per step and the top-N kernels")  # fmt: skip
    ap.add_argument("--cpus", default=None,
                    help="comma list of CPU numbers: process i runs pinned to the i-th "
                    "(sched_setaffinity), to see whether a mode follows the core")  # fmt: skip
    ap.add_argument("--cpu", type=int, default=None,
                    help="(internal, with --child) the CPU this process pins itself to")  # fmt: skip
    ap.add_argument("--out", type=Path, default=None, help="JSON lines file")
    ap.add_argument("--child", action="store_true",
                    help="(internal) run one process's measurement and print its RESULT line")  # fmt: skip
    return ap


def child(args) -> dict:
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    sys.path.insert(0, str(ROOT))
    import cupy as cp
    from burn_autodiff import Autodiff
    from burn_tensor import get_backend

    from benches.training_step.__main__ import make_row

    dev = Autodiff(get_backend(args.backend)).device()
    row = make_row(args.row, dev, "full")
    stream = cp.cuda.get_current_stream()
    for _ in range(5):
        row.step()
    stream.synchronize()
    walls, launches, cpus, gpus = [], [], [], []
    a, b = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(args.steps):
        a.record(stream)
        t0, c0 = time.perf_counter(), time.thread_time()
        row.step()
        t1, c1 = time.perf_counter(), time.thread_time()
        b.record(stream)
        b.synchronize()
        t2 = time.perf_counter()
        walls.append((t2 - t0) * 1e3)
        launches.append((t1 - t0) * 1e3)
        cpus.append((c1 - c0) * 1e3)
        gpus.append(cp.cuda.get_elapsed_time(a, b))
    if args.profile:
        import cProfile
        import pstats

        pr = cProfile.Profile()
        pr.enable()
        for _ in range(3):
            row.step()
        stream.synchronize()
        pr.disable()
        st = pstats.Stats(pr)
        print(f"PROFILE seed {os.environ.get('PYTHONHASHSEED')}: "
              f"{sum(v[1] for v in st.stats.values()) // 3} calls per step", flush=True)  # fmt: skip
        st.sort_stats("tottime").print_stats(args.profile)
    extra = {}
    if args.kernels:
        import torch

        from benches.probes.gpu_kernels import kernel_table

        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
            for _ in range(3):
                row.step()
            stream.synchronize()
        tab = kernel_table(p, 3)
        extra = {"busy": tab["busy_ms"], "idle": tab["idle_ms"], "span": tab["span_ms"],
                 "top": [[k[:60], round(ms, 3), n] for k, ms, n in tab["kernels"][: args.kernels]]}  # fmt: skip
    med = statistics.median
    return {**extra, "seed": os.environ.get("PYTHONHASHSEED"), "wall": med(walls), "launch": med(launches),
            "cpu": med(cpus), "gpu": med(gpus), "wall_min": min(walls), "wall_max": max(walls)}  # fmt: skip


def _clocks() -> str:
    try:
        q = "clocks.sm,clocks.mem,power.draw,temperature.gpu"
        got = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)  # fmt: skip
        return got.stdout.strip().splitlines()[0] if got.stdout.strip() else "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    if args.child:
        print("RESULT " + json.dumps(child(args)), flush=True)
        return
    rows = []
    seeds = [int(v) for v in args.seeds.split(",")] if args.seeds else list(range(args.procs))
    cpus = [int(v) for v in args.cpus.split(",")] if args.cpus else []
    if cpus and len(seeds) < len(cpus):
        seeds = (seeds * len(cpus))[: len(cpus)]
    for n, i in enumerate(seeds):
        env = dict(os.environ, PYTHONHASHSEED=str(i))
        for kv in args.env:
            k, _, v = kv.partition("=")
            env[k] = v
        cmd = [sys.executable, __file__, "--child", "--row", args.row, "--backend", args.backend,
               "--steps", str(args.steps), "--profile", str(args.profile),
               "--kernels", str(args.kernels)]  # fmt: skip
        if cpus:
            cmd += ["--cpu", str(cpus[n % len(cpus)])]
        t = time.perf_counter()
        got = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        res = [ln for ln in got.stdout.splitlines() if ln.startswith("RESULT ")]
        if not res:
            print(f"seed {i}: failed (rc {got.returncode})\n{got.stderr[-2000:]}", flush=True)
            continue
        r = json.loads(res[-1][7:])
        r["cpu_pin"] = cpus[n % len(cpus)] if cpus else None
        if args.profile:
            prof = got.stdout.split("PROFILE", 1)[-1].split("RESULT ", 1)[0]
            print("PROFILE" + prof[:6000], flush=True)
        r["clocks"] = _clocks()
        r["proc_s"] = time.perf_counter() - t
        rows.append(r)
        print(json.dumps(r), flush=True)
        if args.out:
            with args.out.open("a") as f:
                f.write(json.dumps(r) + "\n")
    env_note = " ".join(args.env) or "(no overrides)"
    print(f"\n{args.row} on Autodiff({args.backend}) {env_note}: medians of {args.steps} steps, ms")
    print(f"{'seed':>4} {'wall':>7} {'launch':>7} {'cpu':>7} {'gpu':>7} {'min':>7} {'max':>7}  "
          "sm MHz, mem MHz, W, C")  # fmt: skip
    for r in rows:
        busy = f"  busy {r['busy']:.2f} idle {r['idle']:.2f}" if "busy" in r else ""
        pin = "" if r.get("cpu_pin") is None else f"  on CPU {r['cpu_pin']}"
        print(f"{r['seed']:>4} {r['wall']:7.2f} {r['launch']:7.2f} {r['cpu']:7.2f} "
              f"{r['gpu']:7.2f} {r['wall_min']:7.2f} {r['wall_max']:7.2f}  {r['clocks']}{busy}{pin}")  # fmt: skip


if __name__ == "__main__":
    main()
