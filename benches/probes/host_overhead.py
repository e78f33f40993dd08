"""Python host overhead of a training step: the guide model's step at tiny sizes on NdArray.

    python benches/probes/host_overhead.py [--batch 1] [--hidden 8] [--profile] [--src ROOT]

With hidden size 8 and batch 1 every numpy call costs ~1-3 us, so the step time is nearly all
Python in the frontend layers (burn_tensor dispatch, burn_autodiff recording and backward,
burn_nn's module tree, burn_optim's Adam step): the host time each step costs on a GPU backend
before the GPU gets work. It prints, and writes as JSON (`--out`, default
`benches/results/host_overhead.json`):

- the step time: `--repeats` blocks of `--steps` steps each, median and minimum per step;
- per-op Tensor-layer overhead on 16-element float32 tensors: `t + t` minus the backend's
  `float_add` on the same primitives, for NdArray and for an Autodiff(NdArray) tensor that
  requires grad (minimum over many calls, in us);
- with `--profile`, a cProfile of `--profile-steps` steps: time per package and the top
  functions by own time (calls per step beside them).

`--src ROOT` imports the packages of another checkout first (e.g. an export of `main`).
`--compare ROOT` times this tree against ROOT's on a noisy machine: one worker process per tree,
pinned to the same core, run blocks of steps alternately (so both see the same load), and the
paired per-block ratios are reported (`speedup` = ROOT's time / this tree's).

    git archive main | tar -x -C /tmp/main_src
    python benches/probes/host_overhead.py --compare /tmp/main_src
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("burn_autodiff", "burn_tensor", "burn_nn", "burn_optim", "burn_ndarray", "numpy")


def build_parser() -> argparse.ArgumentParser:
    """The command line (every option with its help)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=1, help="images per step (default 1)")
    ap.add_argument("--hidden", type=int, default=8, help="guide model hidden size (default 8)")
    ap.add_argument("--steps", type=int, default=50, help="steps per timed block (default 50)")
    ap.add_argument("--repeats", type=int, default=7, help="timed blocks (default 7)")
    ap.add_argument(
        "--op-reps", type=int, default=20000, help="calls per op timing (default 20000)"
    )
    ap.add_argument("--profile", action="store_true", help="print a cProfile of the step")
    ap.add_argument("--profile-steps", type=int, default=20, help="steps profiled (default 20)")
    ap.add_argument(
        "--top", type=int, default=40, help="functions listed by --profile (default 40)"
    )
    ap.add_argument(
        "--src", type=Path, default=None, help="checkout whose packages are imported first"
    )
    ap.add_argument(
        "--compare",
        type=Path,
        default=None,
        help="checkout timed against this tree, block by block on one core",
    )
    ap.add_argument(
        "--worker",
        action="store_true",
        help="internal (started by --compare): read step counts on stdin, print their seconds",
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=ROOT / "benches" / "results" / "host_overhead.json",
        help="JSON file written (default benches/results/host_overhead.json)",
    )
    return ap


def _use_sources(src: Path | None) -> None:
    """Put `src`'s package sources (or this tree's) first on sys.path."""
    root = (src or ROOT).resolve()
    paths = sorted(str(p) for p in (root / "packages").glob("*/src"))
    sys.path[:0] = [str(root), str(root / "examples" / "guide" / "src"), *paths]


def _step(batch: int, hidden: int):
    from burn_autodiff import Autodiff
    from burn_ndarray import NdArray

    import benches.suites.training_step as ts

    ts.HIDDEN = hidden
    device = Autodiff(NdArray(num_threads=1)).device()
    step, _ = ts._burn_step(device, *ts._data(batch))
    return step


def time_steps(step, steps: int, repeats: int) -> dict:
    """Per-step ms over `repeats` blocks of `steps` steps (after a warm-up block)."""
    from benches._timing import _time  # after _use_sources put the tree on sys.path

    _time(step, max(5, steps // 5))
    blocks = [_time(step, steps) / steps * 1e3 for _ in range(repeats)]
    return {"median_ms": statistics.median(blocks), "min_ms": min(blocks), "blocks_ms": blocks}


def _best_us(fn, reps: int) -> float:
    """Minimum per-call time in us over blocks of 100 calls (gc off)."""
    for _ in range(200):
        fn()
    best = float("inf")
    gc.disable()
    try:
        for _ in range(max(1, reps // 100)):
            t0 = time.perf_counter()
            for _ in range(100):
                fn()
            best = min(best, (time.perf_counter() - t0) / 100)
    finally:
        gc.enable()
    return best * 1e6


def op_overhead(reps: int) -> dict:
    """`t + t` against the backend's `float_add` on the same primitives, 16 float32 elements."""
    import numpy as np
    from burn_autodiff import Autodiff
    from burn_ndarray import NdArray
    from burn_tensor import Tensor

    out = {}
    values = np.arange(16, dtype=np.float32)
    for label, backend, grad in (
        ("ndarray", NdArray(num_threads=1), False),
        ("autodiff_require_grad", Autodiff(NdArray(num_threads=1)), True),
    ):
        t = Tensor.from_data(values, backend.device())
        if grad:
            t = t.require_grad()
        # The backend op the Tensor call reaches: float_add of the (inner) backend.
        inner = backend.inner or backend
        p = t.inner().into_primitive() if grad else t.into_primitive()
        tensor_us = _best_us(lambda t=t: t + t, reps)
        backend_us = _best_us(lambda f=inner.float_add, p=p: f(p, p), reps)
        out[label] = {
            "tensor_us": tensor_us,
            "backend_us": backend_us,
            "overhead_us": tensor_us - backend_us,
        }
    return out


def _package(filename: str) -> str:
    if filename == "~":
        return "builtins"
    for pkg in PACKAGES:
        if pkg in filename:
            return pkg
    return "other"


def profile(step, steps: int, top: int) -> dict:
    """Own time per package and the `top` functions by own time, per step."""
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(steps):
        step()
    pr.disable()
    stats = pstats.Stats(pr).stats
    by_pkg: dict[str, float] = {}
    for (f, _line, _name), (_cc, _nc, tt, _ct, _callers) in stats.items():
        by_pkg[_package(f)] = by_pkg.get(_package(f), 0.0) + tt / steps * 1e3
    rows = sorted(stats.items(), key=lambda kv: -kv[1][2])[:top]
    funcs = [
        {
            "ms": tt / steps * 1e3,
            "calls": nc // steps,
            "name": f"{name} ({f.split('/')[-1]}:{line})",
        }
        for (f, line, name), (_cc, nc, tt, _ct, _callers) in rows
    ]
    return {"by_package_ms": by_pkg, "functions": funcs}


def _print_profile(prof: dict) -> None:
    total = sum(prof["by_package_ms"].values())
    for pkg, ms in sorted(prof["by_package_ms"].items(), key=lambda kv: -kv[1]):
        print(f"  {pkg:16s} {ms:7.3f} ms {100 * ms / total:5.1f}%")
    for row in prof["functions"]:
        print(f"  {row['ms']:7.3f} ms {row['calls']:5d}  {row['name']}")


def worker(args) -> None:
    """Serve `--compare`: each input line is a step count; reply with the seconds they took."""
    step = _step(args.batch, args.hidden)
    time_steps(step, args.steps, 1)  # warm-up
    print("ready", flush=True)
    from benches._timing import _time

    for line in sys.stdin:
        print(_time(step, int(line)), flush=True)


def compare(args) -> dict:
    """Alternate blocks of steps between this tree and `args.compare`, both on one core."""
    core = str(min(os.sched_getaffinity(0)))
    procs = {}
    for label, src in (("this", None), ("other", args.compare)):
        cmd = ["taskset", "-c", core, sys.executable, __file__, "--worker"]
        cmd += ["--batch", str(args.batch), "--hidden", str(args.hidden)]
        cmd += ["--steps", str(args.steps)] + (["--src", str(src)] if src else [])
        procs[label] = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
    for p in procs.values():
        assert p.stdout.readline().strip() == "ready"
    times: dict[str, list[float]] = {"this": [], "other": []}
    for _ in range(args.repeats):
        for label, p in procs.items():
            p.stdin.write(f"{args.steps}\n")
            p.stdin.flush()
            times[label].append(float(p.stdout.readline()) / args.steps * 1e3)
    for p in procs.values():
        p.stdin.close()
        p.wait()
    ratios = [o / t for t, o in zip(times["this"], times["other"])]
    return {
        "other": str(args.compare),
        "this_ms": {"median": statistics.median(times["this"]), "min": min(times["this"])},
        "other_ms": {"median": statistics.median(times["other"]), "min": min(times["other"])},
        "speedup_median": statistics.median(ratios),
        "speedup_of_mins": min(times["other"]) / min(times["this"]),
    }


def main() -> None:
    args = build_parser().parse_args()
    _use_sources(args.src)
    if args.worker:
        worker(args)
        return
    if args.compare is not None:
        report = {"suite": "host_overhead", "compare": compare(args)}
        c = report["compare"]
        print(
            f"this tree: median {c['this_ms']['median']:.3f} ms, min {c['this_ms']['min']:.3f} ms"
            f" | {c['other']}: median {c['other_ms']['median']:.3f} ms,"
            f" min {c['other_ms']['min']:.3f} ms | speedup: median of block ratios"
            f" {c['speedup_median']:.2f}x, of minimums {c['speedup_of_mins']:.2f}x"
        )
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
        return
    step = _step(args.batch, args.hidden)
    report = {
        "suite": "host_overhead",
        "params": {"batch": args.batch, "hidden": args.hidden, "src": str(args.src or ROOT)},
        "step": time_steps(step, args.steps, args.repeats),
        "op_overhead": op_overhead(args.op_reps),
    }
    s = report["step"]
    print(f"step: median {s['median_ms']:.3f} ms, min {s['min_ms']:.3f} ms")
    for label, r in report["op_overhead"].items():
        print(
            f"t + t [{label}]: {r['tensor_us']:.2f} us, backend float_add {r['backend_us']:.2f} us,"
            f" overhead {r['overhead_us']:.2f} us"
        )
    if args.profile:
        report["profile"] = profile(step, args.profile_steps, args.top)
        _print_profile(report["profile"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
