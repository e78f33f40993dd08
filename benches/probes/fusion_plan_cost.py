"""Issue 35: the host cost of one fused plan against its ops run eagerly on the inner backend.

    python benches/probes/fusion_plan_cost.py [--src /tmp/base] [--shape 64,16,24,24]

No GPU: burn_cuda's CPU stand-in with no-op kernels (as `fusion_host.py`, whose array
allocation it shares), backend level (no Tensor layer, no autodiff). Per case, process CPU us
per call (the minimum of `--rounds` rounds of `--calls` calls): `Cuda()` running a chain of
2, 3 or 6 elementwise ops (`a * b`, `* 0.5`, `abs`, `+ a`, `exp`, `- b`), every result held,
beside `Fusion(Cuda())` recording the same chain and flushing it as one fused kernel (its
recipe found: the plan recurs); then one op each side runs on the inner backend through
Fusion's wrapper (`float_reshape`, delegated) and alone (the pass-through: a lone `relu` of a
ready tensor, learned after two one-op plans). What a step's plans cost its host is read off
this: a fused plan pays `records + flush + one launch` where the inner backend pays one
launch per op.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benches.probes.fusion_host import _lean_arrays, _use_sources  # noqa: E402


def _best_us(fn, calls: int, rounds: int) -> float:
    for _ in range(min(calls, 200)):
        fn()
    best = float("inf")
    for _ in range(rounds):
        t = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.process_time() - t) / calls)
    return best * 1e6


def _chains(be, x, y, flush):
    """Chains of 2, 3 and 6 ops on backend `be` over primitives `x`, `y`; `flush` after."""
    keep = []

    def chain(n):
        def run():
            r = [be.float_mul(x, y)]
            if n > 1:
                r.append(be.float_mul_scalar(r[-1], 0.5))
            if n > 2:
                r.append(be.float_abs(r[-1]))
            if n > 3:
                r.append(be.float_add(r[-1], x))
                r.append(be.float_exp(r[-1]))
                r.append(be.float_sub(r[-1], y))
            flush()
            keep.append(r)  # every result held until the plan ran, then dropped
            keep.clear()

        return run

    return {n: chain(n) for n in (2, 3, 6)}


def run(shape: tuple, calls: int, rounds: int, alloc: str) -> dict:
    """{case: (inner us, fusion us)} for the chains, the delegated and the passed-through op."""
    import numpy as np
    from burn_fusion import Fusion
    from burn_tensor import Tensor
    from cpu_backend import cuda_on_cpu_backend
    from fake_cupy import FakeCupy

    out = {}
    fake = FakeCupy(execute=False)
    with _lean_arrays(alloc), cuda_on_cpu_backend(fake=fake) as (cuda, _):
        fused = Fusion(cuda)
        dev = fused.device()
        xs = [Tensor.from_data(np.ones(shape, np.float32), dev).into_primitive() for _ in (0, 1)]
        dev.sync()
        x, y = xs
        st = fused.stream(dev.index)
        inner = _chains(cuda, x.prim, y.prim, lambda: None)
        fusion = _chains(fused, x, y, st.flush)
        for n in (2, 3, 6):  # (a lone op is no plan to fuse: it passes through, below)
            out[f"{n} ops, one plan"] = (_best_us(inner[n], calls, rounds),
                                         _best_us(fusion[n], calls, rounds))  # fmt: skip
        flat = [shape[0], int(np.prod(shape[1:]))]
        out["delegated op (reshape)"] = (
            _best_us(lambda: cuda.float_reshape(x.prim, flat), calls, rounds),
            _best_us(lambda: fused.float_reshape(x, flat), calls, rounds),
        )
        out["passed-through op (relu)"] = (
            _best_us(lambda: cuda.relu(x.prim), calls, rounds),
            _best_us(lambda: (fused.relu(x), st.flush()), calls, rounds),
        )
    return out


def build_parser() -> argparse.ArgumentParser:
    """The probe's command line (tests/test_cli_help.py checks every option has help)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="64,16,24,24", help="operand shape (default 64,16,24,24)")
    ap.add_argument("--calls", type=int, default=3000, help="calls per round (default 3000)")
    ap.add_argument("--rounds", type=int, default=7, help="rounds, the min is kept (default 7)")
    ap.add_argument("--alloc", choices=("pool", "fresh"), default="pool",
                    help="stand-in arrays, as fusion_host.py's --alloc (default pool)")  # fmt: skip
    ap.add_argument("--src", type=Path, default=None, help="checkout whose packages run")
    return ap


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    try:
        shape = tuple(int(d) for d in args.shape.split(","))
    except ValueError:
        raise SystemExit(f"fusion_plan_cost: --shape must be ints like 64,512, got {args.shape!r}")
    if args.calls < 1 or args.rounds < 1:
        raise SystemExit(f"fusion_plan_cost: --calls and --rounds must be >= 1, got "
                         f"{args.calls} and {args.rounds}")  # fmt: skip
    _use_sources(args.src)
    for case, (a, b) in run(shape, args.calls, args.rounds, args.alloc).items():
        print(f"{case:26s} Cuda {a:7.2f} us | Fusion(Cuda) {b:7.2f} us | {b - a:+7.2f} us")


if __name__ == "__main__":
    main()
