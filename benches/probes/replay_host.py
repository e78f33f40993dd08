"""Issue 35: the host Python of one captured step's replay, on the CPU (PoCL), split by function.

    python benches/probes/replay_host.py [--tape cl,cuda-rules] [--replays 5] [--runs 7]
                                         [--top 25] [--size small] [--against /work/main]

Captures `benches/training_step`'s transformer step (`_rows.transformer_train(device, size,
capture=True)`: ~60 parameters and their Adam moments) on `Autodiff(Fusion(OpenCl()))` and
replays it. Tapes: "cl" the OpenCL tape (inputs rebound, no copies); "cuda-rules" the OpenCL tape
under a CUDA graph's rules (`packages/burn-fusion/tests/_capture_cuda_rules.CudaRulesTape`:
fixed addresses, every input copied in, random draws and Adam resident), the stand-in for the
GPU's `CudaTape` (burn-cuda's CPU stand-in has no stream capture, so it cannot record); "cuda"
the real `Autodiff(Fusion(Cuda()))` on a GPU (thread time then includes cupy's launches).

Per tape it prints the Python function calls per replay (cProfile: the stable figure on a
loaded machine), the host CPU time per replay (`time.thread_time` of the calling thread, min
over `--runs` runs of `--replays` replays: the Python and the OpenCL enqueues, not PoCL's
kernels, which run on its own threads), the process CPU time (kernels included) and the same
under cProfile, the calling thread's CPU per replay split at the tape's replay (before it:
flatten, guards, binding the inputs -- what delays the GPU; the tape's replay: its launches;
after it: the results; `--compare`: the same with the bind fast paths off), and the
functions by calls and by own time, with the capture layer's (`burn_fusion/_capture*.py`)
total apart from the tape's and the rest.
`--against DIR`: the same probe, in a subprocess, with `DIR/packages/burn-fusion/src` first on
`sys.path` (another checkout's capture layer: a before/after in one run).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tape", default="cl,cuda-rules",
                    help="comma list of tapes: cl (OpenCL, rebinds inputs), cuda-rules (a CUDA "
                         "graph's rules on OpenCL: inputs copied in, resident Adam/random), "
                         "cuda (the real CudaTape: needs a CUDA GPU)")  # fmt: skip
    ap.add_argument("--replays", type=int, default=5, help="replays per timed or profiled run")
    ap.add_argument("--runs", type=int, default=7, help="timed runs (the minimum is reported)")
    ap.add_argument("--top", type=int, default=25, help="functions listed, by calls and by time")
    ap.add_argument("--size", default="small", choices=("small", "full"),
                    help="transformer size of benches/training_step (small: d_model 64)")  # fmt: skip
    ap.add_argument("--against", default=None, metavar="DIR",
                    help="also run with DIR/packages/burn-fusion/src's capture layer (e.g. the "
                         "main checkout), in a subprocess, before this one")  # fmt: skip
    ap.add_argument("--sync", action="store_true",
                    help="sync the device before each timed replay (as a loop that reads its "
                         "loss each step: the host phases then do not share the CPU with the "
                         "previous step's PoCL kernels)")  # fmt: skip
    ap.add_argument("--compare", action="store_true",
                    help="also time the replays with the bind fast paths switched off on the "
                         "live recording (every input copied before the launch, as before "
                         "issue 35's change): a before/after in one run")  # fmt: skip
    ap.add_argument("--fusion-src", default=None, metavar="DIR",
                    help="(internal, used by --against) import burn_fusion from DIR")
    return ap


def _use_tape(kind: str) -> None:
    if kind in ("cl", "cuda"):
        return
    if kind != "cuda-rules":
        raise SystemExit(f"replay_host: unknown tape {kind!r} (cl, cuda-rules, cuda)")
    sys.path.insert(0, str(ROOT / "packages" / "burn-fusion" / "tests"))
    from _capture_cuda_rules import CudaRulesTape
    from burn_opencl._gpu_runtime import OpenClRuntime

    OpenClRuntime.tape = lambda self: CudaRulesTape(self.rt)


def _layer(filename: str) -> str:
    if "burn_fusion/_capture" in filename or "_capture_cuda_rules" in filename:
        return "capture layer" if "/burn_fusion/" in filename else "tape (cuda rules)"
    if "_capture_tape" in filename:
        return "tape (OpenCL)"
    return "rest"


def _watch(cap, mark=None) -> list:
    """Timestamps (thread CPU) around the replayed recording's `tape.replay`, appended to the
    list returned, between the probe's own marks at each step's start and end; `mark`: called
    there instead."""
    marks: list = []
    if mark is None:
        mark = lambda: marks.append(time.thread_time())  # noqa: E731
    for guard in cap._guards.values():
        tape = None if guard.last is None else guard.last.tape
        if tape is None:
            continue
        inner = tape.replay

        def timed(inner=inner):
            mark()
            inner()
            mark()

        tape.replay = timed  # an instance attribute: `Replay.replay` calls it
    return marks


def _unwatch(cap) -> None:
    for guard in cap._guards.values():
        if guard.last is not None and guard.last.tape is not None:
            guard.last.tape.__dict__.pop("replay", None)


def _count_calls(row, cap, n: int) -> list:
    """Python and C function calls per replay (sys.setprofile) before, in and after the tape's
    replay."""
    counts = [0, 0, 0]
    phase = [0]

    def count(frame, event, arg):
        if event in ("call", "c_call"):
            counts[phase[0]] += 1

    _watch(cap, lambda: phase.__setitem__(0, phase[0] + 1))  # tape in / out
    for _ in range(n):
        phase[0] = 0
        sys.setprofile(count)
        try:
            row.step()
        finally:
            sys.setprofile(None)
    _unwatch(cap)
    return [c / n for c in counts]


def _split(marks: list, n: int) -> list:
    """Per replay (s): [before the tape's replay, inside it, after it], from `_watch`'s marks
    (4 per step: start, tape in, tape out, end); inf if a step did not replay."""
    if len(marks) != 4 * n:
        return [float("inf")] * 3
    out = [0.0, 0.0, 0.0]
    for i in range(0, len(marks), 4):
        a, b, c, d = marks[i : i + 4]
        out[0] += (b - a) / n
        out[1] += (c - b) / n
        out[2] += (d - c) / n
    return out


def _timed(row, dev, cap, args) -> tuple:
    """(process CPU, host CPU, [before, in, after] host CPU) per replay, each the min over
    `--runs` runs of `--replays` replays."""
    n = args.replays
    best = host = float("inf")
    split = [float("inf")] * 3
    for _ in range(args.runs):
        t, h = time.process_time(), time.thread_time()
        marks = _watch(cap)
        for _ in range(n):
            if args.sync:
                dev.sync()
            marks.append(time.thread_time())
            row.step()
            marks.append(time.thread_time())
        h = time.thread_time() - h  # the calling thread: the host Python (PoCL runs the
        dev.sync()  # kernels on its own threads, which the process time counts too)
        best = min(best, (time.process_time() - t) / n)
        phases = _split(marks, n)
        host = min(host, sum(phases) if args.sync else h / n)  # (not the syncs' waits)
        split = [min(a, b) for a, b in zip(split, phases)]
        _unwatch(cap)
    return best, host, split


def _fast_paths(cap, on: bool) -> None:
    """Switch the replay's bind fast paths (`burn_fusion._capture_bind`: carry-out after the
    launch, the carried leaves compared in C) off or back on, on the live recordings: off, a
    replay binds as before them (the per-slot loop, every input copied before the launch)."""
    for guard in cap._guards.values():
        rec = guard.last
        if rec is None or not hasattr(rec, "carry"):
            continue
        for name in ("_plan_carry", "_carry_out"):
            rec.__dict__.pop(name, None)
        if not on:
            rec._plan_carry = lambda carry: None
            rec._carry_out = lambda slow, rec=rec: setattr(rec, "last", None)
        rec.carry, rec.carry_go, rec.last = [], None, None
        rec.cur = list(rec.statics)  # (what a slot holds is no longer known: copied anew)


def profile_tape(kind: str, args) -> None:
    _use_tape(kind)
    from burn_autodiff import Autodiff
    from burn_tensor import get_backend

    from benches.training_step import _rows

    dev = Autodiff(get_backend("fusion-cuda" if kind == "cuda" else "fusion-opencl")).device()
    row = _rows.transformer_train(dev, args.size, capture=True)
    for _ in range(6):  # call 5 replays (fresh optimizer, warm-up, two recordings)
        row.step()
    dev.sync()
    cap = row.state["captured"]
    if cap.stats()["replays"] < 1:
        raise SystemExit(f"replay_host: the step does not replay: {cap.stats()}")
    n = args.replays
    best, host, split = _timed(row, dev, cap, args)
    phase_calls = _count_calls(row, cap, n)
    pr = cProfile.Profile()
    t = time.process_time()
    pr.enable()
    for _ in range(n):
        row.step()
    dev.sync()
    pr.disable()
    prof_cpu = (time.process_time() - t) / n
    st = pstats.Stats(pr)
    rows = [(f, v[1] / n, v[2] / n) for f, v in st.stats.items()]  # (func, calls, own s)
    total = sum(c for _, c, _ in rows)
    layers: dict = {}
    for (fn, _, _), c, s in rows:
        a = layers.setdefault(_layer(fn), [0.0, 0.0])
        a[0] += c
        a[1] += s
    print(f"== tape {kind}: {total:.0f} Python calls per replay; host CPU (calling thread) "
          f"{host * 1e3:.2f} ms per replay, process CPU {best * 1e3:.2f} ms (PoCL's kernels "
          f"included; min of {args.runs} x {n}), {prof_cpu * 1e3:.2f} ms under cProfile; "
          f"stats {cap.stats()['replays']} replays, {cap.stats()['recordings']} recordings")  # fmt: skip
    print(f"  host CPU per replay by phase (min of {args.runs} x {n}): before the tape's launch "
          f"{split[0] * 1e3:.3f} ms, the tape's replay {split[1] * 1e3:.3f} ms, after it "
          f"{split[2] * 1e3:.3f} ms; Python calls (sys.setprofile) before {phase_calls[0]:.0f}, "
          f"in {phase_calls[1]:.0f}, after {phase_calls[2]:.0f}")  # fmt: skip
    if args.compare:
        _fast_paths(cap, on=False)
        for _ in range(2):
            row.step()
        _, off_host, off = _timed(row, dev, cap, args)
        off_calls = _count_calls(row, cap, n)
        _fast_paths(cap, on=True)
        print(f"  without the bind fast paths: host CPU {off_host * 1e3:.2f} ms per replay; "
              f"before the launch {off[0] * 1e3:.3f} ms, the tape's replay "
              f"{off[1] * 1e3:.3f} ms, after it {off[2] * 1e3:.3f} ms; Python calls before "
              f"{off_calls[0]:.0f}, in {off_calls[1]:.0f}, after {off_calls[2]:.0f}")  # fmt: skip
    for name, (c, s) in sorted(layers.items()):
        print(f"  {name:18s} {c:8.0f} calls  {s * 1e3:7.3f} ms own time per replay")
    where = lambda f: f"{Path(f[0]).name}:{f[1]}({f[2]})"  # noqa: E731
    print("  by calls per replay:")
    for f, c, s in sorted(rows, key=lambda r: -r[1])[: args.top]:
        print(f"    {c:7.0f}  {s * 1e6:8.1f} us  {where(f)}")
    print("  by own time per replay:")
    for f, c, s in sorted(rows, key=lambda r: -r[2])[: args.top]:
        print(f"    {c:7.0f}  {s * 1e6:8.1f} us  {where(f)}")
    sys.stdout.flush()


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    if args.against:
        src = Path(args.against) / "packages" / "burn-fusion" / "src"
        # this run's options less `--against DIR` (or `--against=DIR`)
        rest = [a for i, a in enumerate(argv) if not a.startswith("--against")
                and (i == 0 or argv[i - 1] != "--against")]  # fmt: skip
        print(f"#### capture layer of {src}", flush=True)
        subprocess.run([sys.executable, __file__, *rest, "--fusion-src", str(src)], check=True)
        print(f"#### capture layer of {ROOT}", flush=True)
    if args.fusion_src:
        sys.path.insert(0, args.fusion_src)
    sys.path.insert(0, str(ROOT))
    import burn_fusion

    if args.fusion_src and not burn_fusion.__file__.startswith(args.fusion_src):
        raise SystemExit(f"replay_host: burn_fusion came from {burn_fusion.__file__}")
    os.environ.setdefault("BURN_CAPTURE_DEBUG", "0")
    for kind in [k.strip() for k in args.tape.split(",") if k.strip()]:
        profile_tape(kind, args)


if __name__ == "__main__":
    main()
