"""Issue 36: the Python cost of one generated token on Cuda, with and without the cache.

    python benches/probes/generation_host.py [--tokens 64] [--profile] [--top 30] [--src ROOT]

No GPU: the bench's model (`benches/attention/bench_generation.py`: embedding, a causal pre-norm
`TransformerEncoder`, a linear head; d_model 256, 4 layers, 8 heads, vocab 1000, batch 4) runs
on burn-cuda's CPU stand-in with no-op kernels (`FakeCupy(execute=False)`), so what is timed is
the host's Python per token: `generate`'s loop, the model's modules, the Tensor layer, Cuda's
routing and launches. On the H200 (session 19) the bench took 7.0 ms a token with the cache and
28 ms without, both host-bound at this size, so the cache's speedup (4.0x, target 5x) is a ratio
of host costs. Printed: process CPU ms per token for each mode (the tokens after a warm-up
generation), and with `--profile` the cached mode's top functions by own time and its backend
ops per token. The stand-in's allocation and launch decoding are not cupy's: compare before and
after, not against the GPU's figure. `--src ROOT` runs another checkout's packages.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build_parser() -> argparse.ArgumentParser:
    """The probe's command line (tests/test_cli_help.py checks every option has help)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=64, help="tokens generated per run (default 64)")
    ap.add_argument("--prompt", type=int, default=8, help="prompt length (default 8)")
    ap.add_argument("--src", type=Path, default=None, help="checkout whose packages run")
    ap.add_argument("--profile", action="store_true", help="cProfile the cached mode, list the top")
    ap.add_argument("--top", type=int, default=30, help="functions --profile lists (default 30)")
    ap.add_argument(
        "--backend", default=None,
        help="run on this real backend (e.g. cuda on the GPU machine) instead of the stand-in; "
        "then the figures are wall ms per token after a sync, and --profile covers the GPU's",
    )  # fmt: skip
    return ap


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    root = (args.src or ROOT).resolve()
    sys.path[:0] = [str(ROOT), *sorted(str(p) for p in (root / "packages").glob("*/src")),
                    str(root / "packages" / "burn-cuda" / "tests")]  # fmt: skip
    if args.backend:
        from burn_tensor.backend import get_backend

        _measure(args, get_backend(args.backend), [], time.perf_counter)
        return
    from cpu_backend import cuda_on_cpu_backend
    from fake_cupy import FakeCupy

    from benches.probes.fusion_host import _lean_arrays

    fake = FakeCupy(execute=False)
    made = []  # every kernel and module the backend asks cupy to build
    raw_kernel, raw_module = fake.RawKernel, fake.RawModule
    fake.RawKernel = lambda code, name, *a, **k: (
        made.append(name) or raw_kernel(code, name, *a, **k)
    )
    fake.RawModule = lambda code, *a, **k: made.append("module") or raw_module(code, *a, **k)
    with _lean_arrays(), cuda_on_cpu_backend(fake=fake) as (be, _):
        _measure(args, be, made, time.process_time)


def _measure(args, be, made: list, clock) -> None:
    """Time `generate` per token with and without the cache on backend `be` (`clock`: process
    CPU time on the stand-in, wall time on a real device, after a sync)."""
    from burn_nn.generation import Sampler, generate
    from burn_tensor import Tensor

    from benches.attention.bench_generation import build_model

    device = be.device()
    device.seed(0)
    logits, enc = build_model(device)
    prompt = Tensor.from_ints([[(7 * i + 3 * j) % 1000 for j in range(args.prompt)]
                               for i in range(4)], device)  # fmt: skip

    def run(cached: bool):
        cache = enc.new_autoregressive_cache() if cached else None
        # the stand-in's no-op kernels leave the logits' bytes as they were: any token
        return generate(lambda tk: logits(tk, cache), prompt, args.tokens, Sampler(0.0))

    for mode in (True, False):
        first = len(made)
        run(mode)  # warm-up: kernels built, plans recorded
        print(f"{'cache' if mode else 'no_cache':9s} warm-up built {len(made) - first} kernels")
        gc.collect()
        gc.disable()
        before = len(made)
        device.sync()
        t = clock()
        run(mode)
        device.sync()
        ms = 1e3 * (clock() - t) / args.tokens
        gc.enable()
        # a kernel built during the timed run is an nvrtc compile on the GPU (milliseconds)
        print(f"{'cache' if mode else 'no_cache':9s} {ms:7.3f} ms/token "
              f"({args.tokens} tokens after a {args.prompt}-token prompt, batch 4); "
              f"{len(made) - before} kernels built after the warm-up: "
              f"{sorted(set(made[before:]))[:8]}")  # fmt: skip
    if args.profile:
        pr = cProfile.Profile()
        pr.enable()
        run(True)
        pr.disable()
        st = pstats.Stats(pr)
        calls = sum(s[1] for s in st.stats.values()) // args.tokens
        print(f"cache: {calls} Python calls per token")
        ops: dict = {}
        for (file, _, name), s in st.stats.items():
            if "/burn_cuda/" in file or "/burn_gpu/" in file:
                ops[name] = ops.get(name, 0) + s[0]
        busy = sorted(ops.items(), key=lambda i: -i[1])[:15]
        print("burn_cuda/burn_gpu functions by calls per token: " + ", ".join(
            f"{n} {c / args.tokens:.1f}" for n, c in busy))  # fmt: skip
        st.sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
