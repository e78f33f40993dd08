"""Issues 35/36: Autodiff's and the Tensor layer's host cost per op, on burn-cuda's CPU stand-in.

    python benches/probes/autodiff_host.py [--size cpu|gpu|quick] [--src ROOT] [--profile PHASE]

No GPU needed: the transformer step of `benches/suites/transformer_precision.py` (float32, the
`fp32` case) runs on `Autodiff` over burn-cuda's CPU stand-in with no-op kernels and GEMMs
(`FakeCupy(execute=False)`), so what is timed is the host's Python: the Tensor layer, Autodiff's
recording and backward walk, the rules, burn-cuda's launch bookkeeping. Printed:

- per step: process CPU ms of forward (model + loss), backward (`loss.backward()`) and optimizer
  (`GradientsParams.from_grads` + Adam's step for each sub-module), min of `--runs` (>= 7) steps;
- per op at the Tensor level on the same backend (linear fwd+bwd, add, mul, layer_norm, gelu,
  dropout, attention fwd+bwd): Python calls (cProfile of one call) and CPU us per call, min of
  `--runs` runs of `--reps` calls;
- with `--shares`, 7 cProfile'd steps' forward and backward split by package: the frontend
  (burn_tensor, burn_autodiff, burn_nn: what this probe's issue trims), the backend's launch
  path (burn_cuda, burn_gpu), the stand-in itself, numpy;
- with `--profile forward|backward|optimizer`, the top functions of that phase by own time.

`--src ROOT` imports another checkout's packages (e.g. an export of main) for a before/after:

    git archive main | tar -x -C /tmp/base
    python benches/probes/autodiff_host.py --src /tmp/base --size gpu
    python benches/probes/autodiff_host.py --size gpu

The stand-in's allocation is slower than cupy's pool, so absolute us are not the GPU host's;
the before/after ratio and the call counts are what carry over.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import inspect
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PHASES = ("forward", "backward", "optimizer")


def _use_sources(src: Path | None) -> None:
    """Put `src`'s package sources (or this tree's) first on sys.path."""
    root = (src or ROOT).resolve()
    paths = sorted(str(p) for p in (root / "packages").glob("*/src"))
    sys.path[:0] = [str(ROOT), *paths, str(root / "packages" / "burn-cuda" / "tests")]


def step_phases(device, size: dict) -> dict:
    """phase -> a callable running that phase of one transformer_precision fp32 step on `device`
    (each phase takes the previous one's result; the suite's own step closure is reused)."""
    from burn_optim import GradientsParams

    from benches.suites import transformer_precision as tp

    tokens, targets = tp._data(size)
    step = tp._burn_step(device, size, tokens, targets, mixed=False)
    # the suite's step closes over its state, its train function, the optimizers and the batch;
    # train closes over forward(model, x, y): the phases call those pieces one at a time
    free = inspect.getclosurevars(step).nonlocals
    state, optims, x, y = free["state"], free["optims"], free["x"], free["y"]
    forward = inspect.getclosurevars(free["train"]).nonlocals["forward"]
    model = state["model"]

    def optimizer(grads) -> None:
        for k, m in model.items():
            model[k] = optims[k].step(tp.LR, m, GradientsParams.from_grads(grads, m))

    return {"forward": lambda _: forward(model, x, y), "backward": lambda loss: loss.backward(),
            "optimizer": optimizer}  # fmt: skip


def time_phases(phases: dict, runs: int) -> dict:
    """phase -> min CPU ms over `runs` steps (after 2 warm-up steps); the collector is off
    while timing, as in the benches' harness (`benches/_timing.py`)."""
    best = dict.fromkeys(PHASES, float("inf"))
    gc.collect()
    gc.disable()
    for i in range(runs + 2):
        v = None
        for name in PHASES:
            t = time.process_time()
            v = phases[name](v)
            dt = time.process_time() - t
            if i >= 2:
                best[name] = min(best[name], dt * 1e3)
    gc.enable()
    return best


def profile_phase(phases: dict, phase: str, top: int) -> None:
    """Print the top functions of one phase of one step by own time."""
    pr = cProfile.Profile()
    v = None
    for name in PHASES:
        if name == phase:
            pr.enable()
        v = phases[name](v)
        pr.disable()
    st = pstats.Stats(pr)
    print(f"{phase}: {sum(s[1] for s in st.stats.values())} Python calls")
    st.sort_stats("tottime").print_stats(top)


#: (label, path fragment) of the packages `shares` splits a phase's time by, first match wins
GROUPS = (
    ("frontend (burn_tensor, burn_autodiff, burn_nn)", ("/burn_tensor/", "/burn_autodiff/",
                                                        "/burn_nn/")),
    ("backend (burn_cuda, burn_gpu)", ("/burn_cuda/", "/burn_gpu/")),
    ("stand-in (fake cupy / cublas)", ("/burn-cuda/tests/",)),
    ("numpy", ("/numpy/",)),
)


def shares(phases: dict, steps: int = 7) -> dict:
    """phase -> {group: (ms of own time, Python calls)} per step of `steps` cProfile'd steps: how much of the
    host time the frontend's Python is, beside the backend's launch path and the stand-in.
    Builtins (C calls) count for the group of the Python function that called them."""
    profs = {name: cProfile.Profile() for name in PHASES}
    gc.collect()
    gc.disable()  # as the harness times: a collection would land on whichever op allocates
    for _ in range(steps):
        v = None
        for name in PHASES:
            profs[name].enable()
            v = phases[name](v)
            profs[name].disable()
    gc.enable()
    out = {}
    for name in PHASES[:2]:
        acc: dict = {}
        for key, st in pstats.Stats(profs[name]).stats.items():
            if key[0] == "~":  # a builtin: split by its callers
                for caller, cs in st[4].items():
                    g = _group(caller[0])
                    ms, n = acc.get(g, (0.0, 0))
                    acc[g] = (ms + cs[2] * 1e3 / steps, n + cs[1] // steps)
                continue
            g = _group(key[0])
            ms, n = acc.get(g, (0.0, 0))
            acc[g] = (ms + st[2] * 1e3 / steps, n + st[1] // steps)
        out[name] = acc
    return out


def _group(filename: str) -> str:
    f = filename.replace("\\", "/")
    for label, parts in GROUPS:
        if any(p in f for p in parts):
            return label
    return "other (Python stdlib, benches)"


def _print_shares(table: dict) -> None:
    for phase, acc in table.items():
        total = sum(ms for ms, _ in acc.values())
        print(f"{phase} (profiled: {total:.2f} ms own time)")
        for g, (ms, n) in sorted(acc.items(), key=lambda i: -i[1][0]):
            print(f"  {g:50s} {ms:7.2f} ms {100 * ms / total:5.1f}% {n:6d} calls")


def op_cases(device) -> dict:
    """name -> a call of one op (forward + backward where named) at the Tensor level."""
    import numpy as np
    from burn_nn import DropoutConfig
    from burn_tensor import Tensor, activation
    from burn_tensor import module as fn

    rng = np.random.default_rng(0)

    def arr(*shape, grad=True):
        t = Tensor.from_data(rng.standard_normal(shape).astype(np.float32), device)
        return t.require_grad() if grad else t

    x3, w, bias = arr(8, 32, 64), arr(64, 64), arr(64)
    gamma, beta = arr(64), arr(64)
    q, k, v = arr(2, 4, 32, 16), arr(2, 4, 32, 16), arr(2, 4, 32, 16)
    device.seed(0)
    drop = DropoutConfig(0.1).init()

    def bwd(f):
        return lambda: f().sum().backward()

    return {
        "linear fwd": lambda: fn.linear(x3, w, bias),
        "linear fwd+bwd": bwd(lambda: fn.linear(x3, w, bias)),
        "add": lambda: x3 + x3,
        "mul": lambda: x3 * x3,
        "sum+backward": bwd(lambda: x3),
        "layer_norm fwd": lambda: fn.layer_norm(x3, gamma, beta, 1e-5),
        "layer_norm fwd+bwd": bwd(lambda: fn.layer_norm(x3, gamma, beta, 1e-5)),
        "gelu fwd+bwd": bwd(lambda: activation.gelu(x3)),
        "dropout fwd+bwd": bwd(lambda: drop.forward(x3)),
        "attention fwd": lambda: fn.attention(q, k, v),
        "attention fwd+bwd": bwd(lambda: fn.attention(q, k, v)),
    }


def time_op(f, reps: int, runs: int) -> tuple:
    """(Python calls of one `f()`, CPU us per call: min of `runs` runs of `reps` calls)."""
    f()
    pr = cProfile.Profile()
    pr.enable()
    f()
    pr.disable()
    calls = sum(s[1] for s in pstats.Stats(pr).stats.values())
    best = float("inf")
    gc.collect()
    gc.disable()  # as the benches' harness times
    for _ in range(runs):
        t = time.process_time()
        for _ in range(reps):
            f()
        best = min(best, (time.process_time() - t) / reps)
    gc.enable()
    return calls, best * 1e6


def build_parser() -> argparse.ArgumentParser:
    """The probe's command line (tests/test_cli_help.py checks every option has help)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="cpu", help="transformer_precision size: gpu, cpu, quick")
    ap.add_argument("--runs", type=int, default=7, help="timed runs, min taken (default 7)")
    ap.add_argument("--reps", type=int, default=100, help="calls per op timing run (default 100)")
    ap.add_argument("--src", type=Path, default=None, help="checkout whose packages run")
    ap.add_argument("--profile", choices=PHASES, default=None, help="cProfile one step phase")
    ap.add_argument("--top", type=int, default=30, help="functions --profile lists (default 30)")
    ap.add_argument(
        "--shares", action="store_true",
        help="split one profiled step's forward and backward by package (frontend/backend/stand-in)",
    )  # fmt: skip
    ap.add_argument("--no-ops", action="store_true", help="skip the per-op table")
    return ap


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    _use_sources(args.src)
    from burn_autodiff import Autodiff
    from cpu_backend import cuda_on_cpu_backend
    from fake_cupy import FakeCupy

    from benches.suites import transformer_precision as tp

    with cuda_on_cpu_backend(fake=FakeCupy(execute=False), float_dtype="float32") as (be, _):
        device = Autodiff(be).device()
        phases = step_phases(device, tp.SIZES[args.size])
        best = time_phases(phases, max(args.runs, 1))
        fb = best["forward"] + best["backward"]
        print(f"size {args.size}: " + ", ".join(f"{k} {v:.2f} ms" for k, v in best.items())
              + f"; forward+backward {fb:.2f} ms CPU (min of {args.runs})")  # fmt: skip
        if args.shares:
            _print_shares(shares(phases))
        if args.profile:
            profile_phase(phases, args.profile, args.top)
        if args.no_ops:
            return
        print(f"\n{'op':20s} {'calls':>6s} {'CPU us':>8s}")
        for name, f in op_cases(device).items():
            calls, us = time_op(f, args.reps, max(args.runs, 1))
            print(f"{name:20s} {calls:6d} {us:8.1f}")


if __name__ == "__main__":
    main()
