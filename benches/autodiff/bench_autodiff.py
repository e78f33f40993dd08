"""autodiff: MLP 784-256-256-10 forward + backward (batch 128, float32) and per-op overhead.

The cases live in `benches/suites/autodiff.py` (also run by `python -m benches autodiff`); this
script runs that suite, prints its table, the 1.3x-PyTorch target line and the autodiff overhead
per op in µs, and writes benches/results/autodiff.json with `per_op_overhead_us` added.

    OMP_WAIT_POLICY=PASSIVE uv run --no-sync python benches/autodiff/bench_autodiff.py
    uv run python benches/autodiff/bench_autodiff.py --quick    # smoke test
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benches._harness import Settings, eprint, load_torch, render, run_suite, write_json  # noqa: E402
from benches.suites.autodiff import SUITE, per_op_overhead  # noqa: E402


def render_overhead(ov: dict) -> str:
    lines = ["  autodiff overhead per op (µs):"]
    for impl in ("burn", "torch"):
        fb = ov.get(f"{impl}_fwd_bwd_per_op_us")
        fr = ov.get(f"{impl}_fwd_record_per_op_us")
        if fb is None and fr is None:
            continue
        lines.append(
            f"    {impl:5s}  forward+backward {fb:6.2f} us/op (chain fwd+bwd - inner fwd) / ops;"
            f"  forward record {fr:6.2f} us/op (a*b tracked - untracked)"
        )
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The command line of `benches/autodiff/bench_autodiff.py`."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--quick",
        action="store_true",
        help="tiny sizes and a handful of iterations (smoke test, not a measurement)",
    )
    ap.add_argument("--no-torch", action="store_true", help="do not compare with PyTorch")
    ap.add_argument(
        "--out",
        default=str(ROOT / "benches" / "results"),
        help="folder for autodiff.json (default: benches/results)",
    )
    ap.add_argument("--repeats", type=int, help="timed repeats per case (default 7)")
    ap.add_argument(
        "--min-time",
        type=float,
        help="seconds one timed repeat must last at least (default 0.05)",
    )
    return ap


def main() -> int:
    args = build_parser().parse_args()
    for key, value in SUITE.env.items():  # before torch is imported
        os.environ.setdefault(key, value)
    from burn_ndarray import NdArray

    settings = Settings.make(args.quick, args.min_time, args.repeats)
    ctx = {"torch": load_torch(not args.no_torch), "device": NdArray().device()}
    report = run_suite(SUITE, ctx, settings)
    report["environment"]["burn_backend"] = "Autodiff(NdArray())"
    report["per_op_overhead_us"] = ov = per_op_overhead(report)
    print(render(report))
    print(render_overhead(ov))
    path = write_json(report, Path(args.out))
    eprint(f"wrote {path}")
    return 1 if report["status"] == "error" else 0


if __name__ == "__main__":
    raise SystemExit(main())
