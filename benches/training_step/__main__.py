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
        cells = {}
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
            cell = time_steps(row.step, device.sync, args.steps, args.warmup)
            if args.count:
                ops = count_ops(get_backend(name), row.step)
                cell["ops_per_step"] = ops
                cell["us_per_op"] = 1e3 * cell["median_ms"] / max(ops, 1)
                cell["host_us_per_op"] = 1e3 * cell["host_ms"] / max(ops, 1)
            cells[f"Autodiff({name})" if not inference else name] = cell
            if args.profile:
                print(f"== profile {kind} {name}")
                profile(row.step, args.profile)
            if args.capture and name.startswith("fusion"):
                row = make_row(kind, row_device, args.size, capture=True)
                cell = time_steps(row.step, device.sync, args.steps, args.warmup)
                cell["capture_stats"] = row.state["captured"].stats()
                cells[f"captured Autodiff({name})" if not inference else f"captured {name}"] = cell
                if args.profile:
                    print(f"== profile {kind} captured {name}")
                    profile(row.step, args.profile)
        if torch is not None:
            cells.update(_torch_cells(torch, kind, args, tdev))
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


def _torch_cells(torch, kind, args, tdev) -> dict:
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
    out = {}
    for name, fn in fns.items():
        try:
            out[name] = time_steps(fn, sync, args.steps, args.warmup)
        except Exception as exc:  # noqa: BLE001 - report the column, keep the others
            out[name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    return out


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
