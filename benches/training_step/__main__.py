"""`python -m benches.training_step`: whole training steps per backend, beside torch.

Rows (issue 35): guide batch 64, guide batch 1024, transformer f32 (d_model 512, 8 heads,
6 pre-norm layers, batch 32 x 128; `--size small` keeps 6 layers but d_model 64, batch 4 x 16,
so the op count, hence the host cost, is the full step's while the kernels are cheap on a CPU),
guide inference batch 1. Columns: each `--backends` entry wrapped in `Autodiff` (inference: the
backend itself), and torch eager / torch.compile / torch's CUDA-graph step when torch imports
(the graph only on CUDA; float32 matmuls and convolutions with the TF32 setting of the first
backend, `allow_tf32`, as the harness does). Each cell: median of `--steps` steps after
`--warmup`, every step followed by the device's sync. `--count` adds the ops per step (every op
call of the Autodiff backend, counted in a separate run by wrapping its op closures) and the
per-op host microseconds (step time / ops). JSON to `--out`.

    uv run python -m benches.training_step --backends ndarray,fusion-opencl --size small --count
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROWS = ("guide64", "guide1024", "transformer", "infer1")
ROOT = Path(__file__).resolve().parent.parent.parent


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="ndarray", help="comma list of burn backend names")
    ap.add_argument("--rows", default=",".join(ROWS), help=f"comma list of {ROWS}")
    ap.add_argument("--size", choices=("full", "small"), default="full", help="transformer size")
    ap.add_argument("--steps", type=int, default=20, help="timed steps per cell (default 20)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed steps first (default 5)")
    ap.add_argument("--count", action="store_true", help="count ops per step, per-op us")
    ap.add_argument("--no-torch", action="store_true", help="skip the torch columns")
    ap.add_argument("--torch-device", default=None, help="cpu or cuda (default: cuda if usable)")
    ap.add_argument(
        "--gc-freeze",
        action="store_true",
        help="gc.freeze() after each row is built: full collections skip the long-lived heap",
    )
    ap.add_argument(
        "--capture",
        action="store_true",
        help="add a captured column (burn_fusion.capture) per fusion backend (inference: the "
        "forward and argmax captured, the read after)",
    )
    ap.add_argument("--profile", type=int, default=0, help="print a cProfile top-N per cell")
    ap.add_argument(
        "--interleave",
        type=int,
        default=0,
        help="time every column of a row in turns of N steps (all built and warmed first), so "
        "each sees the same host speed: the GPU machine's vCPUs vary by up to 1.6x between "
        "processes and over time (benches/probes/step_modes.py); 0 times the columns one "
        "after the other",
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=ROOT / "benches" / "results" / "training_step_rows.json",
        help="JSON file for the rows (default: %(default)s)",
    )
    return ap


def make_row(kind: str, device, size: str, capture: bool = False):
    from . import _rows

    if kind == "guide64":
        return _rows.guide_train(device, 64, capture)
    if kind == "guide1024":
        return _rows.guide_train(device, 1024, capture)
    if kind == "transformer":
        return _rows.transformer_train(device, size, capture)
    if kind == "infer1":
        return _rows.guide_infer(device, capture)
    raise ValueError(f"training_step: unknown row {kind!r}; expected one of {ROWS}")


def time_steps(step, sync, steps: int, warmup: int) -> dict:
    for _ in range(warmup):
        step()
    sync()
    times, host = [], []
    for _ in range(steps):
        t = time.perf_counter()
        c = time.thread_time()
        step()
        sync()
        host.append(time.thread_time() - c)
        times.append(time.perf_counter() - t)
    # host_ms: this thread's CPU time per step (the Python cost, whatever else the machine runs;
    # it also counts a sync that spins instead of sleeping)
    return {"median_ms": 1e3 * statistics.median(times), "min_ms": 1e3 * min(times),
            "host_ms": 1e3 * statistics.median(host), "steps": steps}


def time_interleaved(columns: dict, steps: int, warmup: int, turn: int) -> dict:
    """`time_steps`'s cells for `columns` (name -> (step, sync)), their steps taken in turns of
    `turn` per column (round robin) after each column's `warmup`; every step is timed with its
    sync, as `time_steps` does. An error in one column is its cell, the others go on."""
    times = {n: [] for n in columns}
    host = {n: [] for n in columns}
    cells: dict = {}
    for name, (step, sync) in columns.items():
        try:
            for _ in range(warmup):
                step()
            sync()
        except Exception as exc:  # noqa: BLE001 - report the column, keep the others
            cells[name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    live = [n for n in columns if n not in cells]
    for _ in range(max(1, -(-steps // turn))):
        for name in list(live):
            step, sync = columns[name]
            try:
                for _ in range(turn):
                    t = time.perf_counter()
                    c = time.thread_time()
                    step()
                    sync()
                    host[name].append(time.thread_time() - c)
                    times[name].append(time.perf_counter() - t)
            except Exception as exc:  # noqa: BLE001 - report the column, keep the others
                cells[name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
                live.remove(name)
    for name in live:
        cells[name] = {"median_ms": 1e3 * statistics.median(times[name]),
                       "min_ms": 1e3 * min(times[name]),
                       "host_ms": 1e3 * statistics.median(host[name]),
                       "steps": len(times[name]), "turn": turn}  # fmt: skip
    return {n: cells[n] for n in columns}


def count_ops(backend, step) -> int:
    """Op calls of one step that reach `backend` (the backend under Autodiff: forward ops, the
    gradient rules' ops and the optimizer's), counted by a profile hook on the code objects of
    its op table in a run of its own (the hook's cost never reaches a timed step). An op whose
    implementation calls other table ops counts each of them too."""
    from burn_tensor import op_table

    codes = set()
    for name in op_table():
        fn = getattr(backend, name, None)
        fn = getattr(fn, "__func__", fn)
        code = getattr(fn, "__code__", None)
        if code is not None:
            codes.add(code)
    n = [0]

    def hook(frame, event, arg):
        if event == "call" and frame.f_code in codes:
            n[0] += 1

    sys.setprofile(hook)
    try:
        step()
    finally:
        sys.setprofile(None)
    return n[0]


def profile(step, top: int) -> None:
    import cProfile
    import pstats

    pr = cProfile.Profile()
    pr.enable()
    for _ in range(3):
        step()
    pr.disable()
    pstats.Stats(pr).sort_stats("tottime").print_stats(top)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    sys.path.insert(0, str(ROOT / "examples" / "guide" / "src"))
    from burn_autodiff import Autodiff
    from burn_tensor.backend import get_backend

    torch = None
    if not args.no_torch:
        try:
            import torch  # noqa: F401
        except Exception:  # noqa: BLE001 - no torch: burn columns only
            torch = None
    tdev = args.torch_device or ("cuda" if torch is not None and torch.cuda.is_available() else "cpu")
    rows = [r for r in args.rows.split(",") if r]
    if torch is not None:
        first = get_backend(args.backends.split(",")[0])
        tf32 = bool(getattr(first, "allow_tf32", getattr(getattr(first, "inner", None), "allow_tf32", False)))
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
    results = []
    for kind in rows:
        # name -> (step, sync, after): `after(cell)` adds op counts / capture stats / a profile
        # once the column is timed
        columns: dict = {}
        params = None
        for name in [b for b in args.backends.split(",") if b]:
            backend = Autodiff(get_backend(name))
            device = backend.device()
            inference = kind == "infer1"
            row_device = device if not inference else get_backend(name).device()
            row = make_row(kind, row_device, args.size)
            params = row.params
            if args.gc_freeze:
                import gc

                gc.freeze()
            label = f"Autodiff({name})" if not inference else name
            columns[label] = (row.step, device.sync, _after(args, kind, label, name, row))
            if args.capture and name.startswith("fusion"):
                row = make_row(kind, row_device, args.size, capture=True)
                label = f"captured Autodiff({name})" if not inference else f"captured {name}"
                columns[label] = (row.step, device.sync, _after(args, kind, label, None, row))
        if torch is not None:
            columns.update(_torch_columns(torch, kind, args, tdev))
        if args.interleave:
            timed = {n: (c[0], c[1]) for n, c in columns.items()}
            cells = time_interleaved(timed, args.steps, args.warmup, args.interleave)
        else:
            cells = {}
            for n, (step, sync, _) in columns.items():
                try:
                    cells[n] = time_steps(step, sync, args.steps, args.warmup)
                except Exception as exc:  # noqa: BLE001 - report the column, keep the others
                    cells[n] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        for n, (_, _, after) in columns.items():
            if after is not None and "error" not in cells[n]:
                after(cells[n])
        results.append({"row": kind, "params": params, "cells": cells})
        _print_row(kind, cells)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    doc = {"suite": "training_step", "environment": {
        "python": platform.python_version(), "torch": getattr(torch, "__version__", None),
        "torch_device": tdev, "size": args.size, "cpu_count": os.cpu_count()},
        "results": results}
    args.out.write_text(json.dumps(doc, indent=1))
    print(f"wrote {args.out}")
    return 0


def _after(args, kind, label, name, row):
    """What runs after a burn column is timed: its op count (`--count`, `name` the backend),
    its capture stats (a captured column) and its profile (`--profile`); None when nothing."""
    captured = row.state.get("captured")
    if not (args.count and name) and captured is None and not args.profile:
        return None
    from burn_tensor.backend import get_backend

    def after(cell):
        if args.count and name:
            ops = count_ops(get_backend(name), row.step)
            cell["ops_per_step"] = ops
            cell["us_per_op"] = 1e3 * cell["median_ms"] / max(ops, 1)
            cell["host_us_per_op"] = 1e3 * cell["host_ms"] / max(ops, 1)
        if captured is not None:
            cell["capture_stats"] = captured.stats()
        if args.profile:
            print(f"== profile {kind} {label}")
            profile(row.step, args.profile)

    return after


def _torch_columns(torch, kind, args, tdev) -> dict:
    """torch's columns of row `kind`: name -> (step, sync, None)."""
    from . import _rows, _torch

    sync = torch.cuda.synchronize if tdev.startswith("cuda") else (lambda: None)
    if kind in ("guide64", "guide1024", "infer1"):
        batch = {"guide64": 64, "guide1024": 1024, "infer1": 1}[kind]
        x, y = _rows.guide_data(batch)
        model = _torch.guide_model(torch, None)
        fns = _torch.steps(torch, model, x, None if kind == "infer1" else y, tdev)
    else:
        d_model, layers, batch, seq = _rows.TRANSFORMER[args.size]
        rng = __import__("numpy").random.default_rng(0)
        x = rng.integers(0, _rows.VOCAB, size=(batch, seq)).astype("int64")
        y = rng.integers(0, _rows.NUM_CLASSES, size=batch).astype("int64")
        fns = _torch.steps(torch, _torch.transformer_model(torch, d_model, layers), x, y, tdev)
    return {name: (fn, sync, None) for name, fn in fns.items()}


def _print_row(kind, cells) -> None:
    print(f"-- {kind}")
    for name, c in cells.items():
        if "error" in c:
            print(f"   {name:40s} {c['error']}")
            continue
        extra = ""
        if "us_per_op" in c:
            extra = f"  {c['ops_per_step']} ops, host {c['host_us_per_op']:.1f} us/op"
        host = f", host {c['host_ms']:.2f}" if "host_ms" in c else ""
        print(f"   {name:40s} {c['median_ms']:9.2f} ms (min {c['min_ms']:.2f}{host}){extra}")


if __name__ == "__main__":
    raise SystemExit(main())
