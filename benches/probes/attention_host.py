"""Issue 36: the Python cost of one attention forward(+backward) on Autodiff(Cuda()).

    python benches/probes/attention_host.py [--shape 32,8,128,64] [--src ROOT] [--profile CASE]

No GPU: `module.attention` runs on `Autodiff` over burn-cuda's CPU stand-in
(`packages/burn-cuda/tests/cpu_backend.py`) with no-op kernels (`FakeCupy(execute=False)`), so
what is timed is the host's Python: the Tensor layer, Autodiff's rule and backward walk, Cuda's
routing to the tensor-core kernels (the stand-in reports compute capability 9.0), argument
building and launch. The step is the attention suite's (`benches/suites/attention.py`, `_burn`):
the forward, then `out.backward(g)` where `Tensor.backward` takes a gradient (else the suite's
older `(out * g).sum().backward()`) and `q.grad(grads)`. Printed per case (float32 and
bfloat16, causal or not, dropout 0 or 0.1; forward alone and forward+backward): Python calls
(a cProfile of one call) and process CPU us per call (min of `--runs` runs of `--reps` calls,
the collector off as in the benches' harness). `--profile CASE` lists that case's top functions
by own time. `--shares` splits each case's profile by package: the stand-in's own Python (its
launch bookkeeping, the lean allocation) is not the GPU host's. `--torch` adds torch CPU's SDPA
per call on a tiny [1, 1, 8, 8] as a scale for what a framework's Python per call costs.

The stand-in's arrays are bare `np.empty` views while the probe runs (fusion_host's
`_lean_arrays`: no guard bytes or fill), but allocation is still slower than cupy's pool, so
absolute us are not the GPU host's; the before/after ratio and the call counts carry over.
`--src ROOT` runs another checkout's packages (`git archive main | tar -x -C /tmp/base`).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DTYPES = {"f32": "float32", "bf16": "bfloat16"}


def _use_sources(src: Path | None) -> None:
    """Put `src`'s package sources (or this tree's) first on sys.path."""
    root = (src or ROOT).resolve()
    paths = sorted(str(p) for p in (root / "packages").glob("*/src"))
    sys.path[:0] = [str(ROOT), *paths, str(root / "packages" / "burn-cuda" / "tests")]


def case_names() -> list:
    """Every case's name: '{fwd|fwd+bwd} {f32|bf16}[ causal][ drop0.1]'."""
    out = []
    for dt in DTYPES:
        for causal in (False, True):
            for drop in (0.0, 0.1):
                for kind in ("fwd", "fwd+bwd"):
                    name = f"{kind} {dt}" + (" causal" if causal else "")
                    out.append(name + (" drop0.1" if drop else ""))
    return out


def _takes_gradient() -> bool:
    """Whether `Tensor.backward` takes the output's gradient (torch's `out.backward(g)`)."""
    import inspect

    from burn_tensor import Tensor

    return len(inspect.signature(Tensor.backward).parameters) > 1


def make_case(device, shape, name: str):
    """A call of the case `name` at `shape` on `device` (the suite's `_burn` step)."""
    import numpy as np
    from burn_tensor import Tensor, module

    rng = np.random.default_rng(0)
    parts = name.split()
    backward, dtype = parts[0] == "fwd+bwd", DTYPES[parts[1]]
    causal, dropout = "causal" in parts, 0.1 if "drop0.1" in parts else 0.0
    arrs = [rng.standard_normal(shape).astype(np.float32) for _ in range(4)]
    q, k, v, g = (Tensor.from_data(a, device).cast(dtype) for a in arrs)
    if not backward:
        return lambda: module.attention(q, k, v, causal=causal, dropout=dropout)
    q, k, v = (t.require_grad() for t in (q, k, v))
    with_gradient = _takes_gradient()

    def run():
        out = module.attention(q, k, v, causal=causal, dropout=dropout)
        grads = out.backward(g) if with_gradient else (out * g).sum().backward()
        return q.grad(grads)

    return run


def time_call(f, reps: int, runs: int) -> tuple:
    """(Python calls of one `f()`, CPU us per call: min of `runs` runs of `reps` calls), after
    3 warm-up calls (Cuda records an attention call's launch plan at its second call)."""
    from benches.probes.autodiff_host import time_op  # ROOT is on sys.path by _use_sources

    for _ in range(2):
        f()
    return time_op(f, reps, runs)  # its own warm-up call is the third


def profile_call(f, top: int) -> None:
    """Print the top functions of 50 calls of `f` by own time (after 3 warm-up calls)."""
    for _ in range(3):
        f()
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(50):
        f()
    pr.disable()
    st = pstats.Stats(pr)
    print(f"{sum(s[1] for s in st.stats.values()) // 50} Python calls per call (50 profiled)")
    st.sort_stats("tottime").print_stats(top)


#: (label, path fragments) `shares` splits a call's profiled time by, the first match wins;
#: the stand-in's own Python (its launch decoding, the probe's lean allocation) is not the GPU
#: host's, so what carries over is the rest
GROUPS = (
    ("frontend (burn_tensor, burn_autodiff)", ("/burn_tensor/", "/burn_autodiff/")),
    ("backend (burn_cuda, burn_gpu)", ("/burn_cuda/", "/burn_gpu/")),
    ("stand-in (fake cupy, lean arrays)", ("/burn-cuda/tests/", "/probes/fusion_host.py")),
    ("numpy", ("/numpy/",)),
)


def _group(filename: str) -> str:
    f = filename.replace("\\", "/")
    for label, parts in GROUPS:
        if any(p in f for p in parts):
            return label
    return "other (stdlib, probe)"


def shares(f, calls: int = 50) -> dict:
    """group -> (share of the profiled own time, Python calls per call) over `calls` profiled
    calls of `f` (after `time_call`'s warm-up); a builtin counts for the group of the Python
    function that called it."""
    pr = cProfile.Profile()
    gc.disable()
    pr.enable()
    for _ in range(calls):
        f()
    pr.disable()
    gc.enable()
    acc: dict = {}
    for key, st in pstats.Stats(pr).stats.items():
        items = st[4].items() if key[0] == "~" else [(key, st)]
        for where, cs in items:
            t, n = acc.get(_group(where[0]), (0.0, 0))
            acc[_group(where[0])] = (t + cs[2], n + cs[1])
    total = sum(t for t, _ in acc.values()) or 1.0
    return {g: (t / total, n // calls) for g, (t, n) in acc.items()}


def torch_scale(reps: int, runs: int) -> None:
    """torch CPU's SDPA per call on [1, 1, 8, 8]: forward, and forward + `out.backward(g)`."""
    import torch

    torch.set_num_threads(1)
    q, k, v, g = (torch.randn(1, 1, 8, 8) for _ in range(4))
    sdpa = torch.nn.functional.scaled_dot_product_attention
    qg, kg, vg = (t.clone().requires_grad_(True) for t in (q, k, v))

    def fb():
        qg.grad = kg.grad = vg.grad = None
        sdpa(qg, kg, vg).backward(g)
        return qg.grad

    for name, f in (("torch fwd [1,1,8,8]", lambda: sdpa(q, k, v)), ("torch fwd+bwd", fb)):
        _, us = time_call(f, reps, runs)
        print(f"{name:28s} {'':>6s} {us:8.1f}")


def build_parser() -> argparse.ArgumentParser:
    """The probe's command line (tests/test_cli_help.py checks every option has help)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="32,8,128,64", help="batch,heads,seq,head_dim")
    ap.add_argument("--cases", default="", help="comma list of case names (default: all)")
    ap.add_argument("--runs", type=int, default=7, help="timed runs, min taken (default 7)")
    ap.add_argument("--reps", type=int, default=50, help="calls per timing run (default 50)")
    ap.add_argument("--src", type=Path, default=None, help="checkout whose packages run")
    ap.add_argument("--profile", default=None, help="a case name: cProfile it, list the top")
    ap.add_argument("--top", type=int, default=25, help="functions --profile lists (default 25)")
    ap.add_argument("--torch", action="store_true", help="add torch CPU SDPA on [1,1,8,8]")
    ap.add_argument(
        "--shares", action="store_true",
        help="per case, split a profile's own time and calls by package (frontend, backend, ...)",
    )  # fmt: skip
    return ap


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    names = case_names()
    chosen = [c.strip() for c in args.cases.split(",") if c.strip()] or names
    for c in [*chosen, *([args.profile] if args.profile else [])]:
        if c not in names:
            raise SystemExit(f"attention_host: unknown case {c!r}; expected one of {names}")
    shape = tuple(int(s) for s in args.shape.split(","))
    if len(shape) != 4:
        raise SystemExit(f"attention_host: --shape needs 4 dims b,h,s,d, got {args.shape!r}")
    _use_sources(args.src)
    from burn_autodiff import Autodiff
    from cpu_backend import cuda_on_cpu_backend
    from fake_cupy import FakeCupy

    from benches.probes.fusion_host import _lean_arrays

    with _lean_arrays(), cuda_on_cpu_backend(fake=FakeCupy(execute=False)) as (be, _):
        device = Autodiff(be).device()
        device.seed(0)
        if args.profile:
            profile_call(make_case(device, shape, args.profile), args.top)
            return
        step = "out.backward(g)" if _takes_gradient() else "(out * g).sum().backward()"
        print(f"shape {list(shape)}, backward by {step}")
        print(f"{'case':28s} {'calls':>6s} {'CPU us':>8s}")
        for name in chosen:
            f = make_case(device, shape, name)
            calls, us = time_call(f, args.reps, max(args.runs, 1))
            print(f"{name:28s} {calls:6d} {us:8.1f}", flush=True)
            if args.shares:
                for g, (part, n) in sorted(shares(f).items(), key=lambda i: -i[1][0]):
                    print(f"    {g:40s} {100 * part:5.1f}% {n:6d} calls", flush=True)
    if args.torch:
        torch_scale(args.reps * 4, max(args.runs, 1))


if __name__ == "__main__":
    main()
