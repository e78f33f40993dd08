"""Run benchmark suites: `python benches/run.py [suite ...] [--quick] [--out DIR] [--no-torch]`.

Each suite compares burn (NdArray backend, through the public Tensor API) with raw numpy and, when
`import torch` works, PyTorch CPU eager in the same process; it prints a table with median times
and ratios, the issue's targets with met/missed, and writes `<out>/<suite>.json`
(default `benches/results/`).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `benches` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benches._harness import (
    Settings,
    eprint,
    load_torch,
    make_context,
    render,
    run_suite,
    write_json,
)
from benches.suites import SUITES

DEFAULT_OUT = Path(__file__).resolve().parent / "results"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def build_parser() -> argparse.ArgumentParser:
    """The `python -m benches` command line."""
    p = argparse.ArgumentParser(prog="python -m benches", description=__doc__.splitlines()[0])
    p.add_argument(
        "suites",
        nargs="*",
        metavar="suite",
        help=f"suites to run (default: all): {', '.join(SUITES)}",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="tiny sizes and a handful of iterations (smoke test, not a measurement)",
    )
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON output folder")
    p.add_argument("--no-torch", action="store_true", help="do not compare with PyTorch")
    p.add_argument(
        "--min-time",
        type=float,
        default=None,
        help="seconds one timed repeat must last at least (default 0.05)",
    )
    p.add_argument("--repeats", type=int, default=None, help="timed repeats per case (default 7)")
    p.add_argument(
        "--backend",
        default="ndarray",
        help="burn backend to time (an entry-point name from `python -m burn.backend`, e.g. "
        "ndarray, opencl, cuda, fusion-opencl, fusion-cuda; autodiff suites wrap it in "
        "Autodiff) (default: %(default)s)",
    )
    p.add_argument("--device", type=int, default=0, help="device index of that backend (default 0)")
    p.add_argument(
        "--torch-device",
        default="cpu",
        help="device the PyTorch comparison runs on, e.g. cpu or cuda (default: %(default)s)",
    )
    p.add_argument(
        "--sizes",
        choices=("auto", "cpu", "gpu"),
        default="auto",
        help="gpu: add the GPU-sized cases (add 2^26, matmul 4096^2 fp32 and 8192^2 bf16, "
        "conv2d 56x56) and the GPU targets; auto: gpu when the backend runs on a GPU "
        "(default: %(default)s)",
    )
    p.add_argument(
        "--small",
        dest="sizes",
        action="store_const",
        const="cpu",
        help="the CPU sizes even on a GPU backend (same as --sizes cpu)",
    )
    p.add_argument("--list", action="store_true", help="list the suites and exit")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list:
        for name, suite in SUITES.items():
            print(f"{name:16s} {suite.description}")
        return 0
    unknown = [s for s in args.suites if s not in SUITES]
    if unknown:
        eprint(f"unknown suite(s): {', '.join(unknown)}; known: {', '.join(SUITES)}")
        return 2
    settings = Settings.make(args.quick, args.min_time, args.repeats)
    selected = args.suites or list(SUITES)
    groups = env_groups(selected)
    if len(groups) > 1:
        # OpenMP (ours and torch's) reads OMP_* once, when it loads: suites that want other
        # settings (the training suites' OMP_WAIT_POLICY=PASSIVE) must not impose them on the
        # others, so each group runs in its own process, one after the other.
        return run_groups(groups, args)
    for name in selected:
        # Before torch is imported: OpenMP reads OMP_* variables once, when it loads.
        for key, value in SUITES[name].env.items():
            os.environ.setdefault(key, value)
    torch = load_torch(not args.no_torch)
    if torch is None and not args.no_torch:
        eprint("note: torch is not importable; comparing with numpy only (see benches/README.md)")
    ctx = make_context(args.backend, args.device, torch, args.torch_device, args.sizes)
    failed = False
    for name in selected:
        report = run_suite(SUITES[name], ctx, settings)
        path = write_json(report, args.out)
        print(render(report))
        print(f"  -> {path}\n", flush=True)
        failed |= report["status"] == "error"
    return 1 if failed else 0


def env_groups(selected: list[str]) -> list[tuple[dict, list[str]]]:
    """The selected suites grouped by the environment they ask for, in first-seen order."""
    groups: dict[tuple, list[str]] = {}
    for name in selected:
        groups.setdefault(tuple(sorted(SUITES[name].env.items())), []).append(name)
    return [(dict(key), names) for key, names in groups.items()]


def run_groups(groups: list[tuple[dict, list[str]]], args: argparse.Namespace) -> int:
    """Run each group of suites in a child process with its environment; 1 if any failed."""
    import subprocess

    common = ["--out", str(args.out), "--backend", args.backend, "--device", str(args.device)]
    common += ["--torch-device", args.torch_device, "--sizes", args.sizes]
    common += ["--quick"] * args.quick + ["--no-torch"] * args.no_torch
    if args.min_time is not None:
        common += ["--min-time", str(args.min_time)]
    if args.repeats is not None:
        common += ["--repeats", str(args.repeats)]
    failed = False
    for env, names in groups:
        child = dict(os.environ)
        for key, value in env.items():
            child.setdefault(key, value)
        shown = " ".join(f"{k}={v}" for k, v in env.items()) or "no extra settings"
        print(f"== suites {', '.join(names)}: own process ({shown})", flush=True)
        cmd = [sys.executable, str(Path(__file__).resolve()), *names, *common]
        failed |= subprocess.run(cmd, env=child).returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
