"""Where the CPU time of NdArray's guide training step goes: wall time and CPU seconds per wall
second under a few thread/spin settings, split by thread kind (main, OpenBLAS, OpenMP, other).

    python benches/probes/cpu_time_probe.py [--threads N] [--seconds S] [--settings a,b,...]

Each setting runs in a fresh subprocess (OpenMP and OpenBLAS read their environment once, when
they load) that builds `benches/suites/training_step.py`'s burn step on `Autodiff(NdArray())`,
warms it up, then runs steps for S seconds. Per thread it reads utime + stime from
`/proc/self/task/*/stat` before and after; a thread is "blas" if it existed right after
`import numpy` (OpenBLAS starts its pool when it loads), "omp" if it appeared during one
[2^20] exp run right after (libgomp starts its pool at its first parallel region; with
BURN_NDARRAY_NATIVE=0 these are the Python pool's threads, and for torch its OpenMP pool), "other"
if it appeared later (e.g. the Python pool where only some ops are native), "main" the calling
thread.
The table comes last. Settings (default: all but torch when torch is missing):

  default     the library's own choice (GOMP_SPINCOUNT=30000 unless OMP_* is set)
  spin0       GOMP_SPINCOUNT=0: OpenMP threads sleep at once after each region
  spin200     GOMP_SPINCOUNT=200: a short spin
  spin300k    GOMP_SPINCOUNT=300000: libgomp's default spin
  passive     OMP_WAIT_POLICY=PASSIVE (what `python -m benches` sets for the training suites)
  blas_nowait OPENBLAS_THREAD_TIMEOUT=4: OpenBLAS threads sleep after 2^4 cycles, not 2^28
  nonative    BURN_NDARRAY_NATIVE=0: the numpy paths and the Python pool
  noconv      BURN_NDARRAY_NATIVE_CONV=0: native kernels except conv2d
  conv_chunked  BURN_NDARRAY_NATIVE_CONV=chunked: the previous native conv (BLAS threads per GEMM)
  torch       PyTorch CPU eager on the same step (torch.set_num_threads(N))
  torch_passive  the same with OMP_WAIT_POLICY=PASSIVE (as `python -m benches` runs it)

About 6-7 s per setting (import, build, 1.5 s warm-up, S = 3 s measured): ~70 s for all eleven.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

SETTINGS = {
    "default": {},
    "spin0": {"GOMP_SPINCOUNT": "0"},
    "spin200": {"GOMP_SPINCOUNT": "200"},
    "spin300k": {"GOMP_SPINCOUNT": "300000"},
    "passive": {"OMP_WAIT_POLICY": "PASSIVE"},
    "blas_nowait": {"OPENBLAS_THREAD_TIMEOUT": "4"},
    "nonative": {"BURN_NDARRAY_NATIVE": "0"},
    "noconv": {"BURN_NDARRAY_NATIVE_CONV": "0"},
    "conv_chunked": {"BURN_NDARRAY_NATIVE_CONV": "chunked"},
    "torch": {},
    "torch_passive": {"OMP_WAIT_POLICY": "PASSIVE"},
}
# variables a setting may change: cleared in every child so only its own apply
KNOBS = ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY", "OPENBLAS_THREAD_TIMEOUT", "BURN_NDARRAY_NATIVE",
         "BURN_NDARRAY_NATIVE_CONV")  # fmt: skip


def thread_ticks() -> dict[int, int]:
    """tid -> utime + stime (clock ticks) of every thread of this process."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        out[int(tid)] = int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
    return out


def child(setting: str, threads: int, seconds: float) -> dict:
    """Run one setting in this process; the result as a dict."""
    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root))
    import numpy as np

    blas = set(thread_ticks()) - {os.getpid()}
    if setting.startswith("torch"):
        import torch

        torch.set_num_threads(threads)
        from benches.suites import training_step as ts

        images, targets = ts._data(64)
        from burn_ndarray import NdArray

        _, initial = ts._burn_step(NdArray(num_threads=1).device(), images, targets)
        before = set(thread_ticks())
        step = ts._torch_step(torch, images, targets, initial, "cpu")
        step()
        omp = set(thread_ticks()) - before - blas - {os.getpid()}  # torch's own OpenMP pool
    else:
        from burn_autodiff import Autodiff
        from burn_ndarray import NdArray, _native
        from burn_tensor import Tensor

        backend = NdArray(num_threads=threads)
        before = set(thread_ticks())
        # one native parallel region with every thread (exp is native at every budget)
        Tensor.from_data(np.ones(1 << 20, np.float32), backend.device()).exp()
        omp = set(thread_ticks()) - before
        from benches.suites import training_step as ts

        images, targets = ts._data(64)
        step, _ = ts._burn_step(Autodiff(backend).device(), images, targets)
    t_end = time.perf_counter() + 1.5
    while time.perf_counter() < t_end:  # warm-up: caches, pools, BLAS threads started
        step()
    t0, c0, k0 = time.perf_counter(), time.process_time(), thread_ticks()
    steps = 0
    while time.perf_counter() - t0 < seconds:
        step()
        steps += 1
    wall, cpu, k1 = time.perf_counter() - t0, time.process_time() - c0, thread_ticks()
    hz = os.sysconf("SC_CLK_TCK")
    kinds = {"main": 0.0, "blas": 0.0, "omp": 0.0, "other": 0.0}
    counts = dict.fromkeys(kinds, 0)
    for tid, t in k1.items():
        kind = (
            "main" if tid == os.getpid()
            else "blas" if tid in blas
            else "omp" if tid in omp
            else "other"
        )  # fmt: skip
        kinds[kind] += (t - k0.get(tid, 0)) / hz / wall
        counts[kind] += 1
    native = "" if setting.startswith("torch") else _native.status()
    return {
        "setting": setting,
        "steps": steps,
        "ms_per_step": 1e3 * wall / max(1, steps),
        "cpu_per_wall": cpu / wall,
        "by_kind": kinds,
        "threads": counts,
        "native": native,
    }


def parent(args) -> int:
    names = [s for s in args.settings.split(",") if s]
    unknown = [s for s in names if s not in SETTINGS]
    if unknown:
        print(f"unknown setting(s) {unknown}; known: {', '.join(SETTINGS)}", file=sys.stderr)
        return 2
    print(f"cores (affinity): {len(os.sched_getaffinity(0))}, budget: {args.threads} threads, "
          f"{args.seconds} s per setting; inherited: "
          + (" ".join(f"{k}={os.environ[k]}" for k in KNOBS if k in os.environ) or "none"),
          flush=True)  # fmt: skip
    rows = []
    for name in names:
        env = {k: v for k, v in os.environ.items() if k not in KNOBS}
        env.update(SETTINGS[name])
        env["BURN_NUM_THREADS"] = str(args.threads)
        cmd = [sys.executable, __file__, "--child", name, "--threads", str(args.threads),
               "--seconds", str(args.seconds)]  # fmt: skip
        res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300,
                             check=False)  # fmt: skip
        line = res.stdout.strip().splitlines()[-1] if res.stdout.strip() else ""
        if res.returncode != 0 or not line.startswith("{"):
            err = (res.stderr.strip().splitlines() or ["no output"])[-1]
            print(f"{name}: failed ({err})", flush=True)
            continue
        row = json.loads(line)
        rows.append(row)
        print(f"{name}: {row['steps']} steps, {row['native'] or 'torch'}", flush=True)
    print()
    head = (f"{'setting':12s} {'ms/step':>8s} {'cpu/wall':>8s} | {'main':>5s} {'blas':>5s} "
            f"{'omp':>5s} {'other':>5s} | threads main/blas/omp/other")  # fmt: skip
    print(head)
    print("-" * len(head))
    for r in rows:
        k, c = r["by_kind"], r["threads"]
        print(f"{r['setting']:12s} {r['ms_per_step']:8.1f} {r['cpu_per_wall']:8.2f} | "
              f"{k['main']:5.2f} {k['blas']:5.2f} {k['omp']:5.2f} {k['other']:5.2f} | "
              f"{c['main']}/{c['blas']}/{c['omp']}/{c['other']}")  # fmt: skip
    print("(cpu/wall: process CPU seconds per wall second; the kind columns split it by thread,"
          " from /proc ticks)")  # fmt: skip
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The command line (every option with its help)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--threads",
        type=int,
        default=len(os.sched_getaffinity(0)),
        help="BURN_NUM_THREADS / torch threads of each run (default: the usable cores)",
    )
    ap.add_argument(
        "--seconds", type=float, default=3.0, help="measured seconds per setting (default 3)"
    )
    default = [s for s in SETTINGS if not s.startswith("torch")]
    try:
        import importlib.util

        if importlib.util.find_spec("torch") is not None:
            default += ["torch", "torch_passive"]
    except (ImportError, ValueError):
        pass
    ap.add_argument(
        "--settings",
        default=",".join(default),
        help=f"comma-separated settings to run, of: {', '.join(SETTINGS)} (default: all"
        " available)",
    )
    ap.add_argument(
        "--child", default=None, help="internal: run one setting in this process and print JSON"
    )
    return ap


def main() -> int:
    ap = build_parser()
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.threads, args.seconds)), flush=True)
        return 0
    return parent(args)


if __name__ == "__main__":
    raise SystemExit(main())
