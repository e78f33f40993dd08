"""Where does a cProfile's `ParamId.__hash__` time come from? (issue 35, "find out why")

    python -m benches.training_step.hash_probe --backend cuda [--size full] [--steps 3]

A cProfile of three f32 transformer steps on `Autodiff(Cuda())` (Python 3.12, H200) put 56% of
the host time in `burn_nn/_param.py` `ParamId.__hash__`: 1,782 calls, 94 us each. The hash
itself is a slot read and `hash(str)` of a cached string (0.22-0.27 us per call under cProfile on
NdArray and on Fusion(OpenCl) here, the same 1,782 calls per 3 steps). Time a profiler charges
to such a function is work done while its frame is current that is not its code:

- a garbage collection (3.12 runs it at the next "eval breaker" check, which a Python function
  makes on entry: `__hash__` is entered from C by a dict lookup right after the optimizer's
  C-level allocations);
- a wait for the GIL (the same check hands the GIL to another thread that asked for it);
- the CPU taken away from the process (descheduling), or a profiler artefact.

Each column separates one cause: (A) cProfile, wall-clock timer; (B) the same with the garbage
collector off; (C) cProfile with a thread-CPU-time timer (waits and descheduling vanish, CPU work
stays); (D) no profiler: `__hash__` wrapped by a perf_counter timer (its real cost per call and
the largest); (E) every collection during the steps (count, ms, generation, the frame it ran in);
and the threads alive. JSON to `--out`.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import pstats
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path


def _hash_row(prof) -> dict:
    st = pstats.Stats(prof)
    for (fn, _line, name), (_cc, nc, tt, _ct, _callers) in st.stats.items():
        if name == "__hash__" and fn.endswith("_param.py"):
            return {"calls": nc, "tottime_ms": 1e3 * tt, "us_per_call": 1e6 * tt / nc,
                    "share_of_profile": tt / st.total_tt}
    return {"calls": 0}


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cuda", help="registry name (default: %(default)s)")
    ap.add_argument(
        "--size", default="full", choices=("full", "small"), help="transformer size"
    )
    ap.add_argument("--steps", type=int, default=3, help="profiled steps (default: 3)")
    ap.add_argument(
        "--out", type=Path, default=Path("hash_probe.json"), help="JSON file of the columns"
    )
    ap.add_argument("--gc-threshold", type=int, default=0,
                    help="gen-0 threshold to set (0: keep Python's); with --heap, reproduces on "
                    "a CPU the collections a GC-tracked GPU primitive (cupy's) causes")
    ap.add_argument("--heap", type=int, default=0,
                    help="long-lived objects to add first (torch + cupy make a large heap)")
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    from burn_autodiff import Autodiff
    from burn_nn._param import ParamId
    from burn_tensor.backend import get_backend

    from ._rows import transformer_train

    device = Autodiff(get_backend(args.backend)).device()
    row = transformer_train(device, args.size)
    for _ in range(2):
        row.step()
    device.sync()

    heap = [[i] for i in range(args.heap)]  # noqa: F841 - kept alive on purpose
    if args.gc_threshold:
        gc.set_threshold(args.gc_threshold, 1, 1)

    def run(n=args.steps):
        for _ in range(n):
            row.step()
        device.sync()

    out = {"python": sys.version.split()[0], "backend": args.backend, "size": args.size,
           "heap": args.heap,
           "steps": args.steps, "gc_threshold": gc.get_threshold(),
           "gc_objects": len(gc.get_objects()),
           "threads": [t.name for t in threading.enumerate()],
           "switch_interval_s": sys.getswitchinterval()}
    t = time.perf_counter()
    run()
    out["wall_ms_per_step"] = 1e3 * (time.perf_counter() - t) / args.steps

    prof = cProfile.Profile()  # (A)
    prof.runcall(run)
    out["A_cprofile"] = _hash_row(prof)

    gc.disable()  # (B)
    try:
        prof = cProfile.Profile()
        prof.runcall(run)
        out["B_cprofile_gc_off"] = _hash_row(prof)
    finally:
        gc.enable()

    prof = cProfile.Profile(time.thread_time)  # (C)
    prof.runcall(run)
    out["C_cprofile_thread_cpu"] = _hash_row(prof)

    original = ParamId.__hash__  # (D)
    spent = []

    def timed(self):
        t0 = time.perf_counter()
        h = original(self)
        spent.append(time.perf_counter() - t0)
        return h

    ParamId.__hash__ = timed
    try:
        run()
    finally:
        ParamId.__hash__ = original
    out["D_timed_hash"] = {"calls": len(spent), "us_per_call": 1e6 * sum(spent) / max(len(spent), 1),
                           "max_us": 1e6 * max(spent, default=0.0)}

    pauses, where, gens, t0 = [], Counter(), Counter(), [0.0]  # (E)
    where_ms = defaultdict(float)

    def cb(phase, info):
        if phase == "start":
            t0[0] = time.perf_counter()
            return
        dt = time.perf_counter() - t0[0]
        f = sys._getframe(1)
        key = f"{f.f_code.co_filename.rsplit('/', 1)[-1]}:{f.f_code.co_name}"
        pauses.append(dt)
        where[key] += 1
        where_ms[key] += 1e3 * dt
        gens[info["generation"]] += 1

    gc.callbacks.append(cb)
    try:
        prof = cProfile.Profile()
        prof.runcall(run)
    finally:
        gc.callbacks.remove(cb)
    out["E_gc"] = {"collections": len(pauses), "total_ms": 1e3 * sum(pauses),
                   "max_ms": 1e3 * max(pauses, default=0.0), "by_generation": dict(gens),
                   "ran_in": {k: [where[k], round(where_ms[k], 3)] for k, _ in where.most_common(8)},
                   "cprofile_same_run": _hash_row(prof)}
    print(json.dumps(out, indent=1))
    args.out.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
