"""Cuda's attention kernels alone, timed with CUDA events beside torch's SDPA (issue 36).

    python benches/probes/attention_kernels.py [--dtypes float32,bfloat16,float16]
        [--seqs 128,1024] [--batch 32] [--heads 8] [--dim 64] [--repeats 20] [--fused-bwd]
        [--json FILE]

For each dtype, sequence length and causal flag: the forward and the backward of burn_cuda's
attention on cupy arrays (`Cuda._attention_fwd` / `_attention_bwd`: the kernels and their
argument set-up, no Autodiff or Tensor layer) with the tensor-core kernels (`mma`: the
defaults, bf16/f16 `mma.sync` or on sm_90 at head dim 64 the wgmma kernels, f32 3xTF32;
every other column pins mma.sync, `BURN_CUDA_ATTENTION_WGMMA=0` and `_WGMMA_BWD=0`; `fwd@16`:
the bf16/f16 forward at 16 query rows per warp,
`BURN_CUDA_ATTENTION_WARP_ROWS=16`, where the default is 32; `old`: the session-17 tensor-core
kernels, `BURN_CUDA_ATTENTION_PIPE=0`, where `mma` is the ldmatrix + cp.async text) and with
`BURN_CUDA_ATTENTION_MMA=0` (`simt`: burn_gpu's flash kernels; float16 has none); with
`--fused-bwd` also the fused one-pass backward (`fused bwd`: `BURN_CUDA_ATTENTION_FUSED_BWD=1`,
`_attention_fused_bwd.py`: its prep, fused and dQ-rounding launches together) beside the two-pass
one (`mma bwd`), from the same forward, and `fused/torch` (mma fwd + fused bwd over torch's
fwd+bwd); and torch's
`scaled_dot_product_attention` forward and forward + backward
(its backward alone is the difference). Each time is the median of `--repeats` event-timed
calls after 3 warm-ups, in ms; TFLOP/s counts 4 b h sq sk d flops forward and 2.5x that
backward, halved when causal. `mma/torch` is fwd+bwd over torch's fwd+bwd (the issue's
target: <= 1.2). Needs cupy, a CUDA GPU and torch built with CUDA.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtypes", default="float32,bfloat16,float16", help="comma list of dtypes")
    ap.add_argument("--seqs", default="128,1024", help="comma list of sequence lengths")
    ap.add_argument("--batch", type=int, default=32, help="batch size")
    ap.add_argument("--heads", type=int, default=8, help="attention heads")
    ap.add_argument("--dim", type=int, default=64, help="head dim")
    ap.add_argument("--repeats", type=int, default=20, help="timed calls per kernel")
    ap.add_argument("--fused-bwd", action="store_true",
                    help="also time the fused backward (BURN_CUDA_ATTENTION_FUSED_BWD=1)")
    ap.add_argument("--json", type=Path, default=None, help="write the rows here")
    return ap


def timed(cp, fn, repeats: int) -> float:
    """Median ms of `fn()` over `repeats` calls, each between two events on the current stream."""
    for _ in range(3):
        fn()
    out = []
    for _ in range(repeats):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(cp.cuda.get_elapsed_time(a, b))
    return statistics.median(out)


def flops(b, h, s, d, causal: bool) -> tuple[float, float]:
    """(forward, backward) flops of one call: 2 products of 2 b h s s d, 2.5x that backward."""
    fwd = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
    return fwd, 2.5 * fwd


def burn_times(cp, np, dtype: str, shape, causal: bool, repeats: int, fused: bool = False) -> dict:
    """{"mma": (fwd ms, bwd ms), "simt": ...} of burn_cuda's kernels on random cupy arrays
    (`fused`: also "fused", the mma forward with the fused backward)."""
    import ml_dtypes
    from burn_cuda import Cuda

    b, h, s, d = shape
    rng = np.random.default_rng(0)
    np_dt = {"float32": np.float32, "bfloat16": ml_dtypes.bfloat16, "float16": np.float16}[dtype]
    host = [rng.standard_normal(shape).astype(np_dt) for _ in range(4)]
    if dtype == "bfloat16":  # cupy takes bf16 as its 16-bit patterns
        q, k, v, g = (cp.asarray(a.view(np.uint16)).view(a.dtype) for a in host)
    else:
        q, k, v, g = (cp.asarray(a) for a in host)
    B = Cuda(float_dtype=dtype)
    scale = 1.0 / d**0.5
    res = {}
    # mma: the defaults; mma16: the bf16/f16 forward at 16 rows per warp; old: the session-17
    # tensor-core text; simt: burn_gpu's
    # fused: the defaults with BURN_CUDA_ATTENTION_FUSED_BWD=1 (the one-pass backward)
    modes = (("mma", "1", "32", "1"), ("mma16", "1", "16", "1"), ("old", "1", "32", "0"),
             ("simt", "0", "32", "1"))  # fmt: skip
    modes += (("fused", "1", "32", "1"),) if fused else ()
    for mode, flag, rows, pipe in modes:
        if (mode == "simt" and dtype == "float16") or (mode == "mma16" and dtype == "float32"):
            continue  # burn_gpu's flash kernels take no float16; f32 has one tiling
        os.environ["BURN_CUDA_ATTENTION_MMA"] = flag
        os.environ["BURN_CUDA_ATTENTION_WARP_ROWS"] = rows
        os.environ["BURN_CUDA_ATTENTION_PIPE"] = pipe
        os.environ["BURN_CUDA_ATTENTION_FUSED_BWD"] = "1" if mode == "fused" else "0"
        # the Hopper kernels only in `mma` (the defaults): the other columns are mma.sync's
        hopper = "1" if mode == "mma" else "0"
        os.environ["BURN_CUDA_ATTENTION_WGMMA"] = os.environ["BURN_CUDA_ATTENTION_WGMMA_BWD"] = hopper
        out, lse = B._attention_fwd(q, k, v, None, causal, scale)
        fwd = timed(cp, lambda: B._attention_fwd(q, k, v, None, causal, scale), repeats)
        bwd = timed(cp, lambda: B._attention_bwd(q, k, v, out, lse, None, g, causal, scale), repeats)
        res[mode] = (fwd, bwd)
    os.environ.pop("BURN_CUDA_ATTENTION_MMA", None)
    os.environ.pop("BURN_CUDA_ATTENTION_WARP_ROWS", None)
    os.environ.pop("BURN_CUDA_ATTENTION_PIPE", None)
    os.environ.pop("BURN_CUDA_ATTENTION_FUSED_BWD", None)
    os.environ.pop("BURN_CUDA_ATTENTION_WGMMA", None)
    os.environ.pop("BURN_CUDA_ATTENTION_WGMMA_BWD", None)
    return res


def torch_times(torch, cp, dtype: str, shape, causal: bool, repeats: int) -> tuple[float, float]:
    """(fwd ms, fwd+bwd ms) of torch's SDPA on the same shape (its own random data)."""
    dt = getattr(torch, dtype)
    q, k, v = (torch.randn(shape, device="cuda", dtype=dt, requires_grad=True) for _ in range(3))
    g = torch.randn(shape, device="cuda", dtype=dt)
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def fwd():
        with torch.no_grad():
            sdpa(q, k, v, is_causal=causal)

    def both():
        q.grad = k.grad = v.grad = None
        sdpa(q, k, v, is_causal=causal).backward(g)

    # torch runs on its current stream; the events go on cupy's: both are the legacy default
    # stream unless either side changed it, so the event pairs bracket torch's kernels too
    return timed(cp, fwd, repeats), timed(cp, both, repeats)


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    import cupy as cp
    import numpy as np
    import torch

    rows = []
    print(f"{'case':24s} {'mma fwd':>8s} {'mma bwd':>8s} {'fwd@16':>8s} {'old fwd':>8s} "
          f"{'old bwd':>8s} {'simt fwd':>8s} {'simt bwd':>8s} {'torch fwd':>9s} "
          f"{'torch f+b':>9s} {'mma TF/s':>8s} {'mma/torch':>9s}"
          + (f" {'fused bwd':>9s} {'fused/torch':>11s}" if args.fused_bwd else ""))  # fmt: skip
    for dtype in [x.strip() for x in args.dtypes.split(",") if x.strip()]:
        for s in [int(x) for x in args.seqs.split(",") if x.strip()]:
            for causal in (False, True):
                shape = (args.batch, args.heads, s, args.dim)
                bt = burn_times(cp, np, dtype, shape, causal, args.repeats, args.fused_bwd)
                tf, tfb = torch_times(torch, cp, dtype, shape, causal, args.repeats)
                mf, mb = bt["mma"]
                nan = (float("nan"), float("nan"))
                sf, sb = bt.get("simt", nan)
                of, ob = bt.get("old", nan)
                f16 = bt.get("mma16", nan)[0]
                ff, fb = flops(*shape, causal)
                tflops = (ff + fb) / ((mf + mb) * 1e-3) / 1e12
                name = f"{dtype} s{s}" + (" causal" if causal else "")
                fused = ""
                if args.fused_bwd:
                    fb_ = bt["fused"][1]
                    fused = f" {fb_:9.3f} {(mf + fb_) / tfb:11.2f}"
                print(f"{name:24s} {mf:8.3f} {mb:8.3f} {f16:8.3f} {of:8.3f} {ob:8.3f} {sf:8.3f} "
                      f"{sb:8.3f} {tf:9.3f} {tfb:9.3f} {tflops:8.1f} {(mf + mb) / tfb:9.2f}"
                      + fused, flush=True)  # fmt: skip
                rows.append({"dtype": dtype, "seq": s, "causal": causal, "shape": list(shape),
                             "mma_ms": [mf, mb], "mma16_fwd_ms": f16, "old_ms": [of, ob],
                             "simt_ms": [sf, sb],
                             "torch_fwd_ms": tf, "torch_fwd_bwd_ms": tfb,
                             "fused_ms": list(bt["fused"]) if "fused" in bt else None})  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
