"""Issue 36: the attention kernels' own times (CUPTI, through torch.profiler), Cuda's beside
torch's SDPA, fwd+bwd per kernel.

    python benches/probes/attention_cupti.py [--dtype bfloat16] [--seqs 1024] [--batch 32]
        [--heads 8] [--dim 64] [--configs base,BURN_CUDA_ATTENTION_WGMMA=0] [--repeats 10]

For each sequence length, causal or not: one forward and one backward of burn_cuda's attention
on cupy arrays (`Cuda._attention_fwd` / `_attention_bwd`) per repeat under each config (`base`:
the environment as it is; `NAME=VALUE+NAME=VALUE`: those switches set for the config), then
torch's `scaled_dot_product_attention` forward and backward; printed per config, the median
time of every kernel that ran (us) and their total. Unlike `attention_kernels.py`, which times
each call between CUDA events (host time inside), these are the kernels' own durations, the
figures the burn-cuda README's Hopper table quotes; cuDNN's kernels show by name. Needs cupy,
a CUDA GPU and torch built with CUDA.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", default="bfloat16", help="bfloat16, float16 or float32")
    ap.add_argument("--seqs", default="1024", help="comma list of sequence lengths")
    ap.add_argument("--batch", type=int, default=32, help="batch size")
    ap.add_argument("--heads", type=int, default=8, help="attention heads")
    ap.add_argument("--dim", type=int, default=64, help="head dim")
    ap.add_argument("--configs", default="base",
                    help="comma list of configs: base, or NAME=VALUE pairs joined by +")  # fmt: skip
    ap.add_argument("--repeats", type=int, default=10, help="profiled repeats per config")
    return ap


def kernel_times(cp, torch, fn, repeats: int) -> dict:
    """{kernel name: median us} of the CUDA kernels `fn()` runs, over `repeats` calls."""
    from torch.profiler import ProfilerActivity, profile

    fn()
    cp.cuda.Device().synchronize()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(repeats):
            fn()
        cp.cuda.Device().synchronize()
        torch.cuda.synchronize()
    times: dict = {}
    for e in prof.events():
        if e.device_type.name == "CUDA":
            times.setdefault(e.name[:60], []).append(e.device_time_total)
    return {k: statistics.median(v) for k, v in times.items()}


def _row(label: str, times: dict) -> str:
    parts = "  ".join(f"{n}={t:.1f}" for n, t in sorted(times.items(), key=lambda x: -x[1]))
    return f"  {label:44s} total {sum(times.values()):8.1f} us  {parts}"


def _switches(config: str) -> dict:
    if config == "base":
        return {}
    return dict(kv.split("=", 1) for kv in config.split("+"))


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    import cupy as cp
    import ml_dtypes
    import numpy as np
    import torch
    from burn_cuda import Cuda

    np_dt = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16, "float32": np.float32}
    b, h, d = args.batch, args.heads, args.dim
    scale = 1.0 / d**0.5
    for s in [int(x) for x in args.seqs.split(",") if x.strip()]:
        for causal in (False, True):
            print(f"== {args.dtype} b{b} h{h} s{s} d{d}" + (" causal" if causal else ""))
            rng = np.random.default_rng(0)
            host = [rng.standard_normal((b, h, s, d)).astype(np_dt[args.dtype]) for _ in range(4)]
            bf16 = args.dtype == "bfloat16"  # cupy takes bfloat16 as its 16-bit patterns
            q, k, v, g = (cp.asarray(a.view(np.uint16)).view(a.dtype) if bf16 else cp.asarray(a)
                          for a in host)  # fmt: skip
            backend = Cuda(float_dtype=args.dtype)
            for config in [c.strip() for c in args.configs.split(",") if c.strip()]:
                saved = dict(os.environ)
                os.environ.update(_switches(config))
                try:

                    def step():
                        o, lse = backend._attention_fwd(q, k, v, None, causal, scale)
                        backend._attention_bwd(q, k, v, o, lse, None, g, causal, scale)

                    print(_row(config, kernel_times(cp, torch, step, args.repeats)), flush=True)
                finally:
                    os.environ.clear()
                    os.environ.update(saved)
            dt = getattr(torch, args.dtype)
            tq, tk, tv = (torch.randn((b, h, s, d), device="cuda", dtype=dt, requires_grad=True)
                          for _ in range(3))  # fmt: skip
            tg = torch.randn((b, h, s, d), device="cuda", dtype=dt)

            def torch_step():
                tq.grad = tk.grad = tv.grad = None
                sdpa = torch.nn.functional.scaled_dot_product_attention
                sdpa(tq, tk, tv, is_causal=causal).backward(tg)

            print(_row("torch SDPA", kernel_times(cp, torch, torch_step, args.repeats)), flush=True)


if __name__ == "__main__":
    main()
